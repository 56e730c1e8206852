"""Transactional email goes first: a worker takes a campaign's messages only when the
transactional queue is empty, so an invitation committed mid-campaign does not wait behind it."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from rq.serializers import JSONSerializer

from portal.campaigns import operations
from portal.campaigns.sending import campaign_pass
from portal.core import clock
from portal.outbox.ground.queues import BULK_EMAIL_QUEUE, EMAIL_QUEUE, queue_named
from portal.outbox.worker import EmailWorker, worker_queues
from portal.outbox.write.publish import publish_outbox_rows
from portal.outbox.write.relay import relay_pass


def test_a_notice_committed_after_a_campaign_is_sent_before_it(
    engine_context, people, draft, make_outbox_row, provider_model
):
    ctx = engine_context
    company, _ = people(volunteers=11)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    assert campaign_pass(ctx) == 12
    notice = make_outbox_row(recipient="someone@example.org", family="notice")
    publish_outbox_rows(ctx.db, ctx.redis, [notice], families=ctx.families, now=clock.utcnow())

    worker = EmailWorker(worker_queues(ctx.redis), connection=ctx.redis, serializer=JSONSerializer)
    worker.work(burst=True, logging_level="WARNING")

    recipients = [email["to"][0] for email in provider_model.sent()]
    assert len(recipients) == 13
    assert recipients[0] == "someone@example.org", "published last, sent first"


def test_the_relay_puts_a_campaign_row_back_on_the_bulk_queue(ctx, people, draft, db):
    company, _ = people(volunteers=0)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx)
    ctx.redis.flushdb()  # Redis lost the message
    with db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET status = 'pending', relay_since = '2000-01-01T00:00:00.000000Z'"))
    assert len(relay_pass(ctx.db, ctx.redis, ctx.settings, families=ctx.families, now=clock.utcnow()).published) == 1
    assert queue_named(ctx.redis, BULK_EMAIL_QUEUE).count == 1 and queue_named(ctx.redis, EMAIL_QUEUE).count == 0


def test_an_audience_nobody_can_receive_is_refused_and_stays_a_draft(ctx, people, draft, db, count):
    company, emails = people(volunteers=0)
    campaign = draft(f"company:{company}")
    operations.unsubscribe(db, user_id=_user(db, emails[0]))
    with pytest.raises(operations.CampaignError, match="Nobody in this audience"):
        operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    assert count("campaigns", "status = 'draft'") == 1 and count("campaign_recipients") == 0


def _user(db, email):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar_one()
