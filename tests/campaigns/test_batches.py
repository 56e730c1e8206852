"""Writing a campaign's rows in batches: each batch with the campaign's progress in one transaction,
published after its commit; a crash half-way resumes with no duplicate and no gap."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from portal.campaigns import operations
from portal.campaigns.sending import campaign_pass, write_next_batch
from portal.outbox.ground.queues import BULK_EMAIL_QUEUE, EMAIL_QUEUE, queue_named


def campaign_state(db, campaign_id):
    with db.read() as conn:
        return conn.execute(
            sa.text("SELECT status, written, recipients FROM campaigns WHERE id = :id"), {"id": campaign_id}
        ).one()


def test_each_batch_commits_its_rows_with_the_progress_and_is_published_after(ctx, people, draft, outbox_rows):
    company, _ = people(volunteers=6)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    assert write_next_batch(ctx, campaign, batch_size=3) == 3
    assert campaign_state(ctx.db, campaign) == ("sending", 3, 7)
    rows = outbox_rows(family="campaign")
    assert len(rows) == 3 and {row["status"] for row in rows} == {"enqueued"}
    assert queue_named(ctx.redis, BULK_EMAIL_QUEUE).count == 1, "one provider batch, on the bulk queue"
    assert queue_named(ctx.redis, EMAIL_QUEUE).count == 0, "not in the way of transactional email"


def test_a_crash_half_way_resumes_with_no_duplicate_and_no_gap(ctx, people, draft, outbox_rows, db):
    company, emails = people(volunteers=6)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    # The process dies inside the second batch, after its rows were inserted, before the commit.
    with db.write() as conn:
        conn.execute(
            sa.text(
                "CREATE TRIGGER crash BEFORE UPDATE OF written ON campaigns WHEN NEW.written = 6 "
                "BEGIN SELECT RAISE(ABORT, 'crash'); END"
            )
        )
    with pytest.raises(Exception, match="crash"):
        campaign_pass(ctx, batch_size=3)
    assert campaign_state(db, campaign) == ("sending", 3, 7)
    assert len(outbox_rows(family="campaign")) == 3, "the second batch left nothing behind"
    with db.write() as conn:
        conn.execute(sa.text("DROP TRIGGER crash"))

    assert campaign_pass(ctx, batch_size=3) == 4
    assert campaign_state(db, campaign) == ("sent", 7, 7)
    assert sorted(row["recipient"] for row in outbox_rows(family="campaign")) == sorted(emails)
    assert campaign_pass(ctx, batch_size=3) == 0, "a finished campaign writes nothing more"


def test_the_recipient_list_is_fixed_when_sending_starts(ctx, people, draft, outbox_rows, make_user):
    company, emails = people(volunteers=1)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    latecomer = make_user("employee", company="Fjord Analytics AS")
    campaign_pass(ctx)
    recipients = {row["recipient"] for row in outbox_rows(family="campaign")}
    assert recipients == set(emails) and latecomer not in recipients


def test_cancel_while_sending_stops_the_rows_not_yet_attempted(ctx, people, draft, outbox_rows, deliver):
    company, _ = people(volunteers=4)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    # One row per write: each is published alone, so each is delivered by itself.
    write_next_batch(ctx, campaign, batch_size=1)
    (first,) = outbox_rows(family="campaign")
    assert deliver(first["id"]) == "ack:sent"
    write_next_batch(ctx, campaign, batch_size=1)
    second = outbox_rows(family="campaign")[1]

    assert operations.cancel(ctx.db, campaign_id=campaign) == operations.CancelResult(stopped=1, may_still_go_out=0)
    assert campaign_pass(ctx) == 0, "no row is written after the cancel"
    statuses = {row["id"]: row["status"] for row in outbox_rows(family="campaign")}
    assert statuses == {first["id"]: "sent", second["id"]: "cancelled"}
    assert deliver(second["id"]) == "ack:not_claimable", "a cancelled row's message sends nothing"


def test_a_campaign_whose_batches_are_all_written_can_still_be_stopped(
    ctx, client, admin, people, draft, outbox_rows, deliver
):
    """Every batch is written within seconds; the provider's rate sends them over minutes."""
    company, _ = people(volunteers=3)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx, batch_size=1)  # each row published alone, so the first can go by itself
    assert campaign_state(ctx.db, campaign).status == "sent"
    first, *waiting = outbox_rows(family="campaign")
    assert deliver(first["id"]) == "ack:sent"

    page = client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True)
    assert "Cancel campaign" in page, "offered while emails still wait"
    assert operations.cancel(ctx.db, campaign_id=campaign).stopped == len(waiting) == 3
    assert campaign_state(ctx.db, campaign).status == "cancelled"
    assert {row["status"] for row in outbox_rows(family="campaign")} == {"sent", "cancelled"}


def test_a_campaign_with_every_email_attempted_has_nothing_to_cancel(ctx, people, draft, outbox_rows, deliver):
    company, _ = people(volunteers=1)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx)
    first, *others = outbox_rows(family="campaign")
    assert deliver(first["id"]) == "ack:sent", "one batch carries every row"
    assert {row["status"] for row in outbox_rows(family="campaign")} == {"sent"}
    with pytest.raises(operations.CampaignError, match="nothing to cancel"):
        operations.cancel(ctx.db, campaign_id=campaign)
    assert campaign_state(ctx.db, campaign).status == "sent"


def test_a_campaign_cancelled_before_its_batch_request_sends_nothing(
    ctx, people, draft, outbox_rows, deliver, provider_model
):
    company, _ = people(volunteers=3)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx)
    rows = outbox_rows(family="campaign")
    assert len({row["batch_id"] for row in rows}) == 1, "composed into one provider batch"
    assert operations.cancel(ctx.db, campaign_id=campaign) == operations.CancelResult(
        stopped=len(rows), may_still_go_out=0
    )
    assert deliver(rows[0]["id"]) == "ack:not_claimable"
    assert provider_model.requests() == [] and {row["status"] for row in outbox_rows(family="campaign")} == {
        "cancelled"
    }


def test_the_campaigns_body_is_stored_once_and_every_email_carries_it(
    ctx, people, draft, outbox_rows, deliver, provider_model
):
    from datetime import timedelta

    from portal.core import clock
    from portal.outbox.operate.retention import purge

    body = "A long letter. " * 2_000 + "**The end.**"
    company, emails = people(volunteers=5)
    campaign = draft(f"company:{company}", body=body)
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx)
    rows = outbox_rows(family="campaign")
    assert len(rows) == len(emails)
    assert all(len(row["template_input"]) < 200 for row in rows), "each row keeps only its own part"
    with ctx.db.read() as conn:
        (stored,) = conn.execute(sa.text("SELECT data FROM email_shared_inputs")).scalars()
    assert body in stored

    for row in rows:
        deliver(row["id"])
    sent = provider_model.sent()
    assert len(sent) == len(emails)
    assert all("The end." in email["text"] and "<strong>The end.</strong>" in email["html"] for email in sent)

    # Past retention, the rows are erased and the shared body goes with the last of them.
    later = clock.utcnow() + timedelta(days=ctx.settings.outbox_retention_days + 1)
    assert purge(ctx.db, ctx.settings, now=later).outbox_rows_erased == len(emails)
    with ctx.db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM email_shared_inputs")).scalar() == 0
