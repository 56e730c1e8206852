"""An operator's pause of sending: real Redis, the real database, real workers and the provider model."""

import dataclasses
import time
from datetime import datetime, timedelta

import sqlalchemy as sa
from rq import Queue
from rq.job import JobStatus
from rq.serializers import JSONSerializer

from devtools.testing import wait_until
from portal.core import clock
from portal.outbox.ground import pause
from portal.outbox.ground.queues import BULK_EMAIL_QUEUE, EMAIL_QUEUE
from portal.outbox.ground.statuses import RETRY, SENDING_PAUSED, SENT
from portal.outbox.operate.operator import ActionRefused, pause_sending, resume_sending
from portal.outbox.send.attempt import deliver as deliver_with
from portal.outbox.send.rate_limit import OPERATOR_PAUSED, rate_limit_for
from portal.outbox.send.single import OneEmail
from portal.outbox.write.publish import publish_outbox_rows
from portal.outbox.write.relay import relay_pass, rows_to_publish
from tests.outbox.test_batch_delivery import batch_requests, campaign_rows, emails_by_row, publish

CAMPAIGN_DATA = {"campaign_id": 1, "subject": "S", "body": "B", "user_id": 1}
RESET_DATA = {"token_nonce": "nonce-1", "name": "Ada", "minutes": 60, "language": "en"}


def _pause(ctx, family=None, reason="provider incident"):
    return pause_sending(ctx, family=family, reason=reason, actor_user_id=None, now=clock.utcnow())


def _resume(ctx, family=None, reason="incident over"):
    return resume_sending(ctx, family=family, reason=reason, actor_user_id=None, now=clock.utcnow())


def _parked(ctx):
    """The IDs of the rows a pause parked, in the order written: the database's word, as the resume reads it."""
    with ctx.db.read() as conn:
        found = conn.execute(
            sa.text(
                "SELECT id FROM email_outbox WHERE status = :retry AND last_error = :paused ORDER BY created_at, id"
            ),
            {"retry": RETRY, "paused": SENDING_PAUSED},
        )
        return list(found.scalars())


def _queued(ctx, queue):
    jobs = Queue(queue, connection=ctx.redis, serializer=JSONSerializer).get_jobs()
    return [job.args[0]["outboxId"] for job in jobs]


def _audit(ctx):
    with ctx.db.read() as conn:
        rows = conn.execute(
            sa.text("SELECT scope, action, actor_user_id, reason FROM email_sending_pauses ORDER BY id")
        )
        return [tuple(row) for row in rows]


def test_a_paused_delivery_gives_its_row_back_untouched_and_waits_parked(
    ctx, make_outbox_row, outbox_row, deliver, provider_model
):
    outbox_id = make_outbox_row()
    assert _pause(ctx).confirmed
    before = clock.utcnow()
    assert deliver(outbox_id) == f"parked:{SENDING_PAUSED}"
    row = outbox_row(outbox_id)
    # No attempt used, no failed state, no claim held: the row waits for the resume.
    assert (row["status"], row["attempt_count"], row["claim_expires_at"]) == (RETRY, 0, None)
    assert row["last_error"] == SENDING_PAUSED
    assert provider_model.requests() == []
    assert _parked(ctx) == [outbox_id]
    # Parked for an hour, not due at once: the relay leaves it alone through a long pause.
    assert clock.parse(row["next_attempt_at"]) >= before + timedelta(seconds=pause.PARKED_SECONDS)
    assert outbox_id not in rows_to_publish(ctx.db, ctx.settings, now=before + timedelta(minutes=30))
    # However often it meets the pause (an hour on, the relay publishes it again), it keeps every attempt.
    for _ in range(ctx.settings.outbox_max_attempts + 1):
        with ctx.db.write() as conn:
            conn.execute(sa.text("UPDATE email_outbox SET next_attempt_at = :now"), {"now": clock.iso(before)})
        assert deliver(outbox_id) == f"parked:{SENDING_PAUSED}"
    assert outbox_row(outbox_id)["attempt_count"] == 0
    assert _parked(ctx) == [outbox_id]
    assert provider_model.requests() == []


def test_a_password_reset_waits_only_for_its_own_familys_pause_or_all(
    ctx, make_outbox_row, outbox_row, deliver, provider_model
):
    _pause(ctx, family="campaign")
    _pause(ctx, family="notice")
    reset = make_outbox_row(family="password_reset", data=RESET_DATA)
    assert deliver(reset) == "ack:sent"
    assert outbox_row(reset)["status"] == SENT

    for scope in ("password_reset", None):
        _resume(ctx, family="campaign")
        _pause(ctx, family="campaign")
        _pause(ctx, family=scope)
        held = make_outbox_row(family="password_reset", data=RESET_DATA)
        assert deliver(held) == f"parked:{SENDING_PAUSED}", scope
        _resume(ctx, family=scope)
    assert len(provider_model.requests()) == 1


class PausedDuringTheWait(OneEmail):
    """The real single-email way; an operator pauses at the worst moment: while the delivery waits
    for a slot, just after its last read before the slot (the recheck after a wait)."""

    def after_wait(self, ctx, held, *, now):
        found = super().after_wait(ctx, held, now=now)
        pause.set_pause(ctx.redis, pause.Pause(pause.ALL, None, "mid-wait", clock.iso(now)))
        return found


def test_a_delivery_waiting_for_its_rate_slot_when_the_pause_comes_takes_none_and_sends_nothing(
    ctx, make_outbox_row, outbox_row, provider_model
):
    # A claim long enough to outlast the wait for a slot (the outbox tests' claim is 3 s).
    ctx = dataclasses.replace(ctx, settings=ctx.settings.with_overrides(outbox_claim_seconds=30))
    outbox_id = make_outbox_row()
    limit = rate_limit_for(ctx.redis, ctx.settings.redis_url, ctx.settings.resend_rate_limit_per_second)
    while limit.take():  # the window is full: the delivery waits for a slot
        pass
    outcome = deliver_with(ctx, PausedDuringTheWait(outbox_id), ctx.families["notice"], now=clock.utcnow())
    assert (outcome.kind, outcome.detail) == ("paused", SENDING_PAUSED)
    assert provider_model.requests() == []
    row = outbox_row(outbox_id)
    assert (row["status"], row["attempt_count"], row["claim_expires_at"]) == (RETRY, 0, None)


def _started_job(ctx, queue=EMAIL_QUEUE):
    """A job RQ has started, as a worker's delivery runs inside one."""
    job = Queue(queue, connection=ctx.redis, serializer=JSONSerializer).enqueue("builtins.print", "x")
    job.set_status(JobStatus.STARTED)
    return job


def test_the_slot_is_the_gate_and_a_pause_is_confirmed_once_every_job_that_took_one_has_ended(ctx):
    limit = rate_limit_for(ctx.redis, ctx.settings.redis_url, 100)
    before, other = _started_job(ctx), _started_job(ctx)
    assert limit.take(pause.Gate("notice", before.id, time.time() + 30)) is True
    pause.set_pause(ctx.redis, pause.Pause("notice", None, "why", clock.iso(clock.utcnow())))
    # The slot script refuses a paused family's slot, and its refusal takes none.
    assert limit.take(pause.Gate("notice", "refused", time.time() + 30)) == OPERATOR_PAUSED
    assert limit.room_left() == limit.item.amount - 1
    assert limit.take(pause.Gate("invitation", other.id, time.time() + 30)) is True  # another family passes
    assert pause.settle(ctx.redis, timeout=0) is False, "a request that took its slot before the pause is out"
    before.set_status(JobStatus.FINISHED)
    assert pause.settle(ctx.redis, timeout=0) is False, "so is the invitation's"
    other.delete()  # a job RQ no longer keeps has ended
    assert pause.settle(ctx.redis, timeout=0) is True
    # A worker that died mid-request: its job stays started, its record expires.
    dead = _started_job(ctx)
    pause.clear_pause(ctx.redis, "notice")
    assert limit.take(pause.Gate("notice", dead.id, time.time() + 0.2)) is True
    assert pause.settle(ctx.redis, timeout=0) is False
    assert pause.settle(ctx.redis, timeout=5, nap=0.05) is True


def test_a_pause_redis_lost_is_restored_from_the_record_by_the_relay(
    ctx, make_outbox_row, outbox_row, deliver, provider_model
):
    _pause(ctx, family="notice")
    ctx.redis.delete(pause.PAUSED_KEY)  # Redis restarted without its data
    relay_pass(ctx.db, ctx.redis, ctx.settings, families=ctx.families, now=clock.utcnow())
    assert [(held.scope, held.reason) for held in pause.pauses(ctx.redis)] == [("notice", "provider incident")]
    outbox_id = make_outbox_row()
    assert deliver(outbox_id) == f"parked:{SENDING_PAUSED}"
    assert provider_model.requests() == []
    # A resume is recorded too: the relay never brings back a pause that ended.
    _resume(ctx, family="notice")
    relay_pass(ctx.db, ctx.redis, ctx.settings, families=ctx.families, now=clock.utcnow())
    assert pause.pauses(ctx.redis) == []


def test_a_paused_batch_parks_every_member_and_the_resume_sends_each_once_in_one_request(ctx, deliver, provider_model):
    ids = campaign_rows(ctx, 30)
    publish(ctx, ids)
    _pause(ctx, family="campaign")
    assert deliver(ids[0]) == f"parked:{SENDING_PAUSED}"
    assert _parked(ctx) == ids and batch_requests(provider_model) == []
    with ctx.db.read() as conn:
        attempts = conn.execute(sa.text("SELECT DISTINCT attempt_count FROM email_outbox")).scalars().all()
    assert attempts == [0]

    assert _resume(ctx, family="campaign").published == 30
    assert _parked(ctx) == []
    (carrier,) = _queued(ctx, BULK_EMAIL_QUEUE)[-1:]
    assert deliver(carrier) == "ack:sent"
    assert len(batch_requests(provider_model)) == 1
    sent = emails_by_row(provider_model)
    assert sorted(sent) == sorted(ids) and all(len(emails) == 1 for emails in sent.values())


def test_bad_input_is_refused_and_changes_nothing(ctx):
    for family, reason in (("no_such_family", "why"), (None, "  "), (None, "x" * 501)):
        try:
            _pause(ctx, family=family, reason=reason)
        except ActionRefused:
            pass
        else:
            raise AssertionError(f"{family!r}, {reason[:10]!r} was taken")
    try:
        _resume(ctx)
    except ActionRefused:
        pass
    else:
        raise AssertionError("a resume of nothing was taken")
    assert pause.pauses(ctx.redis) == []
    assert _audit(ctx) == []
    _pause(ctx)
    try:
        _pause(ctx, reason="twice")
    except ActionRefused:
        pass
    assert [held.reason for held in pause.pauses(ctx.redis)] == ["provider incident"]
    assert _audit(ctx) == [("*", "pause", None, "provider incident")]


def test_the_resume_publishes_transactional_email_before_campaigns_each_in_order(
    ctx, make_outbox_row, deliver, outbox_rows, workers, provider_model
):
    _pause(ctx)
    notices, campaigns = [], []
    for n in range(3):
        campaigns.append(make_outbox_row(family="campaign", data={**CAMPAIGN_DATA, "user_id": n + 1}))
        notices.append(make_outbox_row(recipient=f"notice{n}@example.org"))
    for outbox_id in campaigns + notices:  # campaigns parked first: the resume still puts them last
        assert deliver(outbox_id) == f"parked:{SENDING_PAUSED}"
    assert _parked(ctx) == [x for pair in zip(campaigns, notices, strict=True) for x in pair]

    assert _resume(ctx).published == 6
    assert _parked(ctx) == []
    # Published in that order: a worker already idle on both queues takes the first it finds.
    assert _queued(ctx, EMAIL_QUEUE) == notices
    assert _queued(ctx, BULK_EMAIL_QUEUE) == campaigns
    email_jobs = Queue(EMAIL_QUEUE, connection=ctx.redis, serializer=JSONSerializer).get_jobs()
    bulk_jobs = Queue(BULK_EMAIL_QUEUE, connection=ctx.redis, serializer=JSONSerializer).get_jobs()
    assert max(job.enqueued_at for job in email_jobs) < min(job.enqueued_at for job in bulk_jobs)
    workers()
    assert wait_until(lambda: all(row["status"] == SENT for row in outbox_rows()), timeout=60)
    sent = provider_model.sent()
    assert [email["to"][0] for email in sent[:3]] == [f"notice{n}@example.org" for n in range(3)]
    assert len(sent) == 6
    assert _audit(ctx) == [("*", "pause", None, "provider incident"), ("*", "resume", None, "incident over")]


def test_the_resume_of_one_family_leaves_what_another_pause_holds(ctx, make_outbox_row, deliver):
    _pause(ctx, family="notice")
    _pause(ctx, family="campaign")
    notice = make_outbox_row()
    campaign = make_outbox_row(family="campaign", data=CAMPAIGN_DATA)
    assert deliver(notice) == deliver(campaign) == f"parked:{SENDING_PAUSED}"
    assert _resume(ctx, family="notice").published == 1
    assert _queued(ctx, EMAIL_QUEUE) == [notice] and _queued(ctx, BULK_EMAIL_QUEUE) == []
    assert _parked(ctx) == [campaign]
    # A pause of all sending holds every family, whichever family's own pause ends.
    _pause(ctx)
    assert _resume(ctx, family="campaign").published == 0
    assert _parked(ctx) == [campaign] and _queued(ctx, BULK_EMAIL_QUEUE) == []


def test_no_request_leaves_once_the_pause_is_confirmed_with_workers_mid_wait(
    ctx, make_outbox_row, outbox_rows, workers, provider_model
):
    """Two real workers share a limit of one request a second, so at any moment one of them waits
    for a slot and the other is about to make, or is making, its request. From the moment the pause
    is confirmed, the provider hears nothing more; each waiting row is back, untouched, and the
    resume sends each one exactly once."""
    provider_model.rate_limit_per_second = 1
    ids = [make_outbox_row() for _ in range(8)]
    publish_outbox_rows(ctx.db, ctx.redis, ids, now=clock.utcnow())
    for _ in range(2):
        workers(RESEND_RATE_LIMIT_PER_SECOND="1")
    assert wait_until(lambda: len(provider_model.requests()) >= 2, timeout=30)

    assert _pause(ctx).confirmed
    heard_at_confirmation = len(provider_model.requests())
    confirmed_at = clock.utcnow()

    def all_waiting():
        rows = outbox_rows()
        unsent = [row for row in rows if row["status"] != SENT]
        return unsent and all(
            row["status"] == RETRY and row["last_error"] == SENDING_PAUSED and row["claim_expires_at"] is None
            for row in unsent
        )

    # The negative from the database: every row not sent is back and parked, so no worker holds one.
    assert wait_until(all_waiting, timeout=30)
    requests = provider_model.requests()
    assert len(requests) == heard_at_confirmation, requests[heard_at_confirmation:]
    assert all(datetime.fromisoformat(request["at"]) <= confirmed_at for request in requests)
    assert all(row["attempt_count"] <= 1 for row in outbox_rows())

    _resume(ctx)
    # A deadline, not a speed: on a server database with the machine shared, the resumed emails once
    # took longer than 60 s to settle (they all went, once each).
    assert wait_until(lambda: all(row["status"] == SENT for row in outbox_rows()), timeout=120)
    sent = provider_model.sent()
    assert sorted(email["to"][0] for email in sent) == sorted(row["recipient"] for row in outbox_rows())
    assert len(sent) == len(ids)
