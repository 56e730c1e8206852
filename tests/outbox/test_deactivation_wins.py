"""Deactivation always wins: every email to a colleague who left, of which nothing can have gone out,
is cancelled, whatever its status, and a delivery that waited for a rate slot checks again before its
provider call. With real worker processes, a real Redis, and SIGTERM during a rate-limit wait."""

from __future__ import annotations

import signal
import threading
from datetime import timedelta

import sqlalchemy as sa

from devtools.testing import wait_until
from portal.context import build_context
from portal.core import clock
from portal.outbox.ground.queues import build_envelope
from portal.outbox.ground.rows import cancel_unsent
from portal.outbox.send.batch import claim_batch, seal_batch_request
from portal.outbox.send.consumer import handle_message
from portal.outbox.send.rate_limit import PAUSE_KEY, rate_limit_for
from portal.people.operations import deactivate_colleague
from tests.outbox.test_batch_delivery import batch_of, batch_requests, campaign_rows, emails_by_row, publish

LONG_CLAIM = "30"  # a claim long enough to wait out the provider's pause in


def leaver_and_manager(ctx, make_user, user_id):
    manager = make_user("manager", company="Acme Ltd")
    leaver = make_user("employee", company="Acme Ltd")
    with ctx.db.read() as conn:
        company = conn.execute(sa.text("SELECT id FROM companies WHERE name = 'Acme Ltd'")).scalar_one()

    def deactivate():
        deactivate_colleague(ctx.db, company_id=company, user_id=user_id(leaver), acting_user_id=user_id(manager))

    return leaver, deactivate


def status(ctx, outbox_id):
    with ctx.db.read() as conn:
        return conn.execute(
            sa.text("SELECT status, last_error, first_attempt_at, outcome_unknown FROM email_outbox WHERE id = :id"),
            {"id": outbox_id},
        ).one()


def test_a_row_released_by_sigterm_during_a_rate_wait_is_cancelled_by_a_later_deactivation(
    ctx, make_user, user_id, make_outbox_row, workers, provider_model
):
    leaver, deactivate = leaver_and_manager(ctx, make_user, user_id)
    outbox_id = make_outbox_row(recipient=leaver, publish=True)
    ctx.redis.set(PAUSE_KEY, "1", px=20_000)  # the provider said wait: every worker waits
    worker = workers(OUTBOX_CLAIM_SECONDS=LONG_CLAIM)
    if not wait_until(lambda: status(ctx, outbox_id)[0] == "processing", timeout=30):
        worker.terminate()
        raise AssertionError(worker.log_path.read_text())
    worker.send_signal(signal.SIGTERM)
    worker.wait(timeout=30)
    state, reason, first_attempt_at, unknown = status(ctx, outbox_id)
    assert (state, reason, unknown) == ("retry", "rate_limit_wait", 0) and first_attempt_at is not None

    deactivate()
    assert status(ctx, outbox_id)[:2] == ("cancelled", "recipient_deactivated")
    ctx.redis.delete(PAUSE_KEY)
    workers.drain()
    assert provider_model.requests() == [], "the person who left gets nothing"


def test_a_deactivation_during_a_rate_wait_stops_the_worker_that_waits(
    ctx, make_user, user_id, make_outbox_row, workers, provider_model
):
    leaver, deactivate = leaver_and_manager(ctx, make_user, user_id)
    outbox_id = make_outbox_row(recipient=leaver, publish=True)
    ctx.redis.set(PAUSE_KEY, "1", px=20_000)
    worker = workers(OUTBOX_CLAIM_SECONDS=LONG_CLAIM)
    assert wait_until(lambda: status(ctx, outbox_id)[0] == "processing", timeout=30)
    deactivate()  # its delivery holds the row: it is asked to stop
    assert status(ctx, outbox_id)[0] == "processing"
    worker.send_signal(signal.SIGTERM)
    worker.wait(timeout=30)
    assert status(ctx, outbox_id)[:2] == ("cancelled", "recipient_deactivated"), "its release cancels it"
    ctx.redis.delete(PAUSE_KEY)
    workers.drain()
    assert provider_model.requests() == []


def test_a_row_asked_to_stop_whose_delivery_died_is_cancelled_by_the_next_claim(
    ctx, make_user, user_id, make_outbox_row, workers, provider_model
):
    """A worker killed (SIGKILL) during its wait releases nothing: the next claim, after the claim's
    expiry, finds the request to stop. Its first attempt may have reached the provider (nobody can
    tell from a killed worker), so it is not sent again: a person decides."""
    leaver, deactivate = leaver_and_manager(ctx, make_user, user_id)
    outbox_id = make_outbox_row(recipient=leaver, publish=True)
    ctx.redis.set(PAUSE_KEY, "1", px=20_000)
    worker = workers(OUTBOX_CLAIM_SECONDS=LONG_CLAIM)
    assert wait_until(lambda: status(ctx, outbox_id)[0] == "processing", timeout=30)
    deactivate()
    worker.kill()
    worker.wait(timeout=30)
    ctx.redis.delete(PAUSE_KEY)
    after_expiry = clock.utcnow() + timedelta(seconds=int(LONG_CLAIM) + 1)
    decision = handle_message(ctx, build_envelope(outbox_id), attempt=2, dead_letter=False, now=after_expiry)
    assert decision == "ack:unknown_outcome"
    assert status(ctx, outbox_id)[:2] == ("dead_letter", "unknown_outcome")
    assert provider_model.requests() == []


def test_a_delivery_checks_again_after_its_wait_before_it_calls_the_provider(
    settings, make_user, user_id, make_outbox_row, provider_model
):
    long_claims = build_context(settings.with_overrides(outbox_claim_seconds=30))
    try:
        leaver, deactivate = leaver_and_manager(long_claims, make_user, user_id)
        outbox_id = make_outbox_row(recipient=leaver, publish=True)
        slots = rate_limit_for(long_claims.redis, settings.redis_url, settings.resend_rate_limit_per_second)
        long_claims.redis.set(PAUSE_KEY, "1", px=1_500)
        decisions = []
        delivery = threading.Thread(
            target=lambda: decisions.append(
                handle_message(long_claims, build_envelope(outbox_id), attempt=1, dead_letter=False, now=clock.utcnow())
            )
        )
        delivery.start()
        assert wait_until(lambda: status(long_claims, outbox_id)[0] == "processing", timeout=10)
        deactivate()
        delivery.join(timeout=30)
        assert decisions == ["ack:cancelled"]
        assert status(long_claims, outbox_id)[:2] == ("cancelled", "recipient_deactivated")
        assert provider_model.requests() == []
        # The check came before the slot: only the request itself may follow a slot, so a
        # cancelled row spends none of the rate every worker shares.
        assert slots.room_left() == slots.item.amount
    finally:
        long_claims.db.dispose()


def test_a_row_cancelled_after_a_429_is_not_sent_by_its_retry(ctx, make_outbox_row, provider_model, outbox_row):
    outbox_id = make_outbox_row(publish=True)
    provider_model.fail_next("http_429", count=3, retry_after=0)
    now = clock.utcnow()
    assert handle_message(ctx, build_envelope(outbox_id), attempt=1, dead_letter=False, now=now).startswith("retry:")
    assert outbox_row(outbox_id)["outcome_unknown"] == 0, "a 429 is a definite refusal"
    with ctx.db.write() as conn:
        assert cancel_unsent(conn, [outbox_id], "recipient_deactivated", now=now) == [outbox_id]
    assert outbox_row(outbox_id)["status"] == "cancelled"
    assert len(provider_model.sent()) == 0


def test_a_batch_member_asked_to_stop_while_its_batch_waits_leaves_before_the_seal(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    batch_id = batch_of(ctx.db, ids[0])
    now = clock.utcnow()
    claimed = claim_batch(ctx.db, batch_id, 30, 1, now=now)
    with ctx.db.write() as conn:  # the batch holds its members: the one who left is asked to stop
        assert cancel_unsent(conn, [ids[1]], "recipient_deactivated", now=now) == [ids[1]]
    sealed = seal_batch_request(ctx.db, claimed, now=now)
    assert [member.id for member in sealed.members] == [ids[0], ids[2]]
    assert sealed.provider_key.endswith(":2"), "a new list under a new key: nothing went under the old one"
    with ctx.db.read() as conn:
        left = conn.execute(sa.text("SELECT status, last_error FROM email_outbox WHERE id = :id"), {"id": ids[1]}).one()
    assert tuple(left) == ("cancelled", "recipient_deactivated")


def test_a_member_asked_to_stop_while_its_sealed_batch_waits_for_a_slot_leaves_under_a_new_key(
    settings, provider_model
):
    """The batch is sealed for its first request, then waits for a slot (the slot comes after the
    seal, so the request follows it at once). A member cancelled during that wait leaves: the
    request is taken back, and the list goes without it under a new key."""
    from portal.outbox.send.consumer import use_context

    long_claims = build_context(settings.with_overrides(outbox_claim_seconds=30))
    use_context(long_claims)
    try:
        ids = campaign_rows(long_claims, 3)
        publish(long_claims, ids)
        long_claims.redis.set(PAUSE_KEY, "1", px=1_500)
        decisions = []
        delivery = threading.Thread(
            target=lambda: decisions.append(
                handle_message(long_claims, build_envelope(ids[0]), attempt=1, dead_letter=False, now=clock.utcnow())
            )
        )
        delivery.start()

        def sealed():
            with long_claims.db.read() as conn:
                return conn.execute(sa.text("SELECT sealed_at IS NOT NULL FROM email_batches")).scalar()

        assert wait_until(sealed, timeout=10), "sealed, waiting for its slot"
        with long_claims.db.write() as conn:
            assert cancel_unsent(conn, [ids[1]], "recipient_deactivated", now=clock.utcnow()) == [ids[1]]
        delivery.join(timeout=30)
        assert decisions == ["ack:sent"]
        (request,) = batch_requests(provider_model)
        assert request["idempotency_key"].endswith(":2"), "a new list, a new key"
        assert sorted(emails_by_row(provider_model)) == sorted([ids[0], ids[2]])
        with long_claims.db.read() as conn:
            left = conn.execute(sa.text("SELECT status FROM email_outbox WHERE id = :id"), {"id": ids[1]}).scalar()
            logged = conn.execute(sa.text("SELECT number, answer FROM email_batch_requests")).all()
        assert left == "cancelled"
        assert [tuple(row) for row in logged] == [(1, "accepted")], "the withdrawn request is gone"
    finally:
        use_context(None)
        long_claims.db.dispose()


def test_a_batch_released_after_its_wait_for_a_slot_is_open_again_and_its_members_can_be_cancelled(
    ctx, provider_model, deliver
):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    ctx.redis.set(PAUSE_KEY, "1", px=20_000)  # longer than the claim allows a wait
    assert deliver(ids[0]) == "retry:rate_limit_wait"
    with ctx.db.read() as conn:
        batch = conn.execute(sa.text("SELECT sealed_at, request_count FROM email_batches")).one()
        stamped = conn.execute(sa.text("SELECT COUNT(*) FROM email_outbox WHERE first_attempt_at IS NOT NULL")).scalar()
        logged = conn.execute(sa.text("SELECT COUNT(*) FROM email_batch_requests")).scalar()
    assert tuple(batch) == (None, 0) and stamped == 0 and logged == 0, "no request was made: nothing of it stays"
    with ctx.db.write() as conn:
        assert cancel_unsent(conn, [ids[1]], "recipient_deactivated", now=clock.utcnow()) == [ids[1]]
    assert provider_model.requests() == []
