"""Where a single email's delivery and a batch's must give the same answer, and the single path's
answer is the rule: who may still leave before a request, what a delivery that stalled or waited
finds before its request, and who may settle a claimed batch. Through the real consumer, the real
SDK and the provider model over HTTP; a stall is a pause inside the real rate limit's take."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
import sqlalchemy as sa

from portal.context import build_context
from portal.core import clock
from portal.outbox.ground.queues import build_envelope
from portal.outbox.ground.rows import cancel_unsent
from portal.outbox.ground.statuses import CLAIM_LOST, FAILED
from portal.outbox.send.batch import (
    claim_batch,
    recheck_after_wait,
    release_batch,
    seal_batch_request,
    settle_batch_unsent,
)
from portal.outbox.send.consumer import handle_message
from portal.outbox.send.rate_limit import PAUSE_KEY, rate_limit_for
from tests.outbox.test_batch_delivery import (
    BATCH,
    batch_of,
    batch_requests,
    campaign_rows,
    emails_by_row,
    publish,
    rows,
)


def suppress(ctx, address):
    with ctx.db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO email_suppressions (email, reason, source, created_at) "
                "VALUES (:email, 'complained', 'webhook', :now)"
            ),
            {"email": address, "now": clock.iso(clock.utcnow())},
        )


def long_claims(settings, seconds=30):
    """The engine's context with claims long enough to wait out a pause of the provider's in."""
    return build_context(settings.with_overrides(outbox_claim_seconds=seconds))


def outbox_row_of(ctx, outbox_id):
    with ctx.db.read() as conn:
        return conn.execute(sa.text("SELECT * FROM email_outbox WHERE id = :id"), {"id": outbox_id}).mappings().one()


def deliver_at(ctx, outbox_id, now, attempt=1):
    return handle_message(ctx, build_envelope(outbox_id), attempt=attempt, dead_letter=False, now=now)


# --- who may still leave ----------------------------------------------------------------------------


class Died(BaseException):
    """A delivery's process ends where this is raised: nothing after it runs (as with SIGKILL)."""


def dies_at_its_slot(settings):
    """A context whose next delivery dies as it takes its rate slot, its claim (and a batch's seal)
    written and no request made. Returns the context and the undo of the hook."""
    context = build_context(settings)

    def die(real, *gate):
        raise Died()

    return context, hook(context, "take", die)


def test_a_sealed_batch_taken_over_never_sends_to_a_member_asked_to_stop_or_suppressed(
    settings, ctx, provider_model, deliver
):
    """A delivery sealed its list and died before its request; meanwhile one colleague left and
    another address was suppressed. The takeover cannot know whether the request went: those two
    are never sent and end as a single email would (unknown_outcome, for a person); the third is
    sent under the batch's key."""
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    now = clock.utcnow()
    dying, undo = dies_at_its_slot(settings)
    try:
        with pytest.raises(Died):
            deliver_at(dying, ids[0], now)
    finally:
        undo()
        dying.db.dispose()
    with ctx.db.read() as conn:
        sealed_key = conn.execute(
            sa.text("SELECT provider_key FROM email_batches WHERE sealed_at IS NOT NULL")
        ).scalar()
    assert sealed_key is not None, "the delivery died after its seal"
    with ctx.db.write() as conn:
        assert cancel_unsent(conn, [ids[0]], "recipient_deactivated", now=now) == [ids[0]]
    suppress(ctx, "person2@example.org")

    assert deliver(ids[0], attempt=2, now=now + timedelta(seconds=10)) == "ack:sent"

    assert sorted(emails_by_row(provider_model)) == [ids[2]], "nobody asked to stop or suppressed is sent"
    (request,) = batch_requests(provider_model)
    assert request["idempotency_key"] == sealed_key, "a request may have gone: the key stays"
    state = rows(ctx.db, ids)
    for left in ids[:2]:
        assert (state[left]["status"], state[left]["last_error"]) == ("dead_letter", "unknown_outcome")
    assert state[ids[2]]["status"] == "sent"


def test_a_single_email_taken_over_after_its_first_attempt_is_never_sent_when_suppressed(
    settings, ctx, provider_model, make_outbox_row, outbox_row
):
    """The single path's answer to the same sequence, which the batch's above must match."""
    outbox_id = make_outbox_row(recipient="person9@example.org", publish=True)
    now = clock.utcnow()
    dying, undo = dies_at_its_slot(settings)
    try:
        with pytest.raises(Died):
            deliver_at(dying, outbox_id, now)
    finally:
        undo()
        dying.db.dispose()
    suppress(ctx, "person9@example.org")
    assert deliver_at(ctx, outbox_id, now + timedelta(seconds=10), attempt=2) == "ack:unknown_outcome"
    assert provider_model.requests() == []
    assert (outbox_row(outbox_id)["status"], outbox_row(outbox_id)["last_error"]) == ("dead_letter", "unknown_outcome")


def cancel_during_the_first_request(ctx, method, outbox_id):
    """The provider's `method` (send or send_batch) cancels `outbox_id` as its first request is made:
    the colleague leaves between the slot and the request."""
    real = getattr(ctx.provider, method)
    calls = []

    def cancel_then_send(*args, **kwargs):
        if not calls:
            with ctx.db.write() as conn:
                cancel_unsent(conn, [outbox_id], "recipient_deactivated", now=clock.utcnow())
        calls.append(1)
        return real(*args, **kwargs)

    setattr(ctx.provider, method, cancel_then_send)


def cancel_during_the_wait_after_the_refusal(ctx, outbox_id):
    """The colleague leaves while the delivery waits out the pause the provider's 429 asked for."""

    def cancel_then_wait(real, deadline):
        with ctx.db.write() as conn:
            cancel_unsent(conn, [outbox_id], "recipient_deactivated", now=clock.utcnow())
        return real(deadline)

    return hook(ctx, "wait_for_room", cancel_then_wait)


@pytest.mark.parametrize(
    ("leaves", "retry_after"),
    [("during_the_request", 0.5), ("during_the_request", 0.01), ("during_the_wait", 0.5)],
    ids=["during-the-request", "during-the-request-short-pause", "during-the-wait"],
)
def test_a_member_asked_to_stop_before_a_refused_request_is_not_sent_by_the_retry_after_the_429(
    settings, provider_model, leaves, retry_after
):
    """The only request was refused with a 429 (a definite "not taken"), so the member may still
    leave: asked during the refused request (after a pause long enough to read the rows again, or
    one too short for that), or during the pause after it."""
    context = long_claims(settings)
    undo = None
    try:
        ids = campaign_rows(context, 3)
        publish(context, ids)
        provider_model.fail_next("http_429", path=BATCH, retry_after=retry_after)
        if leaves == "during_the_request":
            cancel_during_the_first_request(context, "send_batch", ids[1])
        else:
            undo = cancel_during_the_wait_after_the_refusal(context, ids[1])
        assert deliver_at(context, ids[0], clock.utcnow()) == "ack:sent"
        refused, accepted = batch_requests(provider_model)
        assert refused["status"] == 429 and accepted["status"] == 200
        assert sorted(emails_by_row(provider_model)) == sorted([ids[0], ids[2]])
        assert accepted["idempotency_key"] != refused["idempotency_key"], "a new list under a new key"
        assert rows(context.db, ids)[ids[1]]["status"] == "cancelled"
    finally:
        if undo:
            undo()
        context.db.dispose()


def test_a_single_email_asked_to_stop_before_a_refused_request_is_not_sent_by_the_retry_after_the_429(
    settings, provider_model, make_outbox_row
):
    context = long_claims(settings)
    try:
        outbox_id = make_outbox_row(publish=True)
        provider_model.fail_next("http_429", retry_after=0.5)
        cancel_during_the_first_request(context, "send", outbox_id)
        assert deliver_at(context, outbox_id, clock.utcnow()) == "ack:cancelled"
        assert provider_model.sent() == []
    finally:
        context.db.dispose()


def test_a_batch_released_after_a_429_is_open_again_and_its_members_can_be_cancelled(ctx, provider_model, deliver):
    """The only request was refused (a definite "not taken"): as for a single email, a member may
    still be cancelled, and the rest go as a new list under a new key."""
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    provider_model.fail_next("http_429", path=BATCH, retry_after=0)
    assert deliver(ids[0]).startswith("retry:rate_limited")
    with ctx.db.write() as conn:
        assert cancel_unsent(conn, [ids[1]], "campaign_cancelled", now=clock.utcnow()) == [ids[1]]
    assert rows(ctx.db, ids)[ids[1]]["status"] == "cancelled"
    ctx.redis.delete(PAUSE_KEY)
    with ctx.db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET next_attempt_at = NULL"))
    assert deliver(ids[0], attempt=2) == "ack:sent"
    refused, accepted = batch_requests(provider_model)
    assert sorted(emails_by_row(provider_model)) == sorted([ids[0], ids[2]])
    assert accepted["idempotency_key"] != refused["idempotency_key"]


# --- what a delivery finds after it waited or stalled -------------------------------------------------


def taken_over_and_sent_meanwhile(other, provider_model, outbox_id):
    """Another delivery (in `other`, a context of its own) claims the row a minute on, when the
    first one's claim has expired, and sends it; then the provider's idempotency window passes, so
    it no longer knows the key."""
    assert deliver_at(other, outbox_id, clock.utcnow() + timedelta(seconds=60), attempt=2) == "ack:sent"
    provider_model.advance_clock(other.settings.provider_idempotency_window_seconds + 60)


def first_row(ctx, make_outbox_row, batched, first):
    """A single email's row, or the first member of a batch of two, published."""
    if not batched:
        return make_outbox_row(publish=True)
    ids = campaign_rows(ctx, 2, first=first)
    publish(ctx, ids)
    return ids[0]


def hook(context, name, replacement):
    """Replace the rate limit's `name` for deliveries in `context` only (each context has a limiter of
    its own); returns the undo."""
    limit = rate_limit_for(context.redis, context.settings.redis_url, context.settings.resend_rate_limit_per_second)
    real = getattr(limit, name)
    setattr(limit, name, lambda *args: replacement(real, *args))
    return lambda: vars(limit).pop(name, None)


@pytest.mark.parametrize("batched", [False, True], ids=["single", "batch"])
def test_a_delivery_that_waited_for_a_slot_reads_its_claim_again_and_sends_nothing_once_it_is_gone(
    settings, ctx, provider_model, make_outbox_row, batched
):
    """The window was full, and while the delivery waited for room (a pause the provider asked for)
    its claim expired and another delivery sent the email. What it read at its claim (a first attempt, nothing outside the
    window) is no longer true: it reads its claim again and gives up."""
    outbox_id = first_row(ctx, make_outbox_row, batched, first=30)
    waiting = long_claims(settings)  # its wait cannot reach its own deadline: only the read stops it
    takes = []

    def full_at_first(real, *gate):
        takes.append(1)
        return False if len(takes) == 1 else real(*gate)

    def wait_while_another_sends(real, deadline):
        taken_over_and_sent_meanwhile(ctx, provider_model, outbox_id)
        waiting.redis.set(PAUSE_KEY, "1", px=200)  # then the provider asks every worker to wait
        return real(deadline)

    undo = [hook(waiting, "take", full_at_first), hook(waiting, "wait_for_room", wait_while_another_sends)]
    try:
        assert deliver_at(waiting, outbox_id, clock.utcnow()) == "ack:claim_lost"
    finally:
        for each in undo:
            each()
        waiting.db.dispose()
    assert len(emails_by_row(provider_model)[outbox_id]) == 1, "one email, not two"


@pytest.mark.parametrize("batched", [False, True], ids=["single", "batch"])
def test_a_delivery_stalled_past_its_claim_after_its_slot_sends_nothing(
    settings, ctx, provider_model, make_outbox_row, batched
):
    """The claim lasts 3 s and the provider may take 2.5 s to answer, so a request must start within
    0.5 s of the claim. A delivery that stalls longer right after its slot (a stopped process, a
    machine that paused) gives up: another may have claimed and sent the row meanwhile, and the
    provider may have forgotten the key. No wait came before the slot, so nothing was read again."""
    outbox_id = first_row(ctx, make_outbox_row, batched, first=40)
    stalling = build_context(settings)

    def take_then_stall(real, *gate):
        taken = real(*gate)
        started = time.monotonic()
        taken_over_and_sent_meanwhile(ctx, provider_model, outbox_id)
        time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
        return taken

    undo = hook(stalling, "take", take_then_stall)
    try:
        assert deliver_at(stalling, outbox_id, clock.utcnow()) == "ack:claim_lost"
    finally:
        undo()
        stalling.db.dispose()
    assert len(emails_by_row(provider_model)[outbox_id]) == 1, "one email, not two"


@pytest.mark.parametrize("batched", [False, True], ids=["single", "batch"])
def test_an_address_suppressed_while_its_delivery_waits_for_a_slot_is_not_sent(
    settings, ctx, provider_model, make_outbox_row, batched
):
    """A complaint arrives while the delivery waits out a pause: the address is not sent to, as it
    would not be at the claim."""
    outbox_id = first_row(ctx, make_outbox_row, batched, first=50)
    address = outbox_row_of(ctx, outbox_id)["recipient"]
    waiting = long_claims(settings)

    def suppressed_during_the_wait(real, deadline):
        suppress(ctx, address)
        return real(deadline)

    waiting.redis.set(PAUSE_KEY, "1", px=200)
    undo = hook(waiting, "wait_for_room", suppressed_during_the_wait)
    try:
        deliver_at(waiting, outbox_id, clock.utcnow())
    finally:
        undo()
        waiting.db.dispose()
    assert outbox_id not in emails_by_row(provider_model)
    assert outbox_row_of(ctx, outbox_id)["status"] == "suppressed"
    if batched:
        assert len(provider_model.sent()) == 1, "the rest of the list goes"


# --- who may settle or reopen a claimed batch -----------------------------------------------------------


def test_a_holder_whose_batch_was_taken_over_neither_settles_nor_releases_it(ctx, provider_model):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    batch_id = batch_of(ctx.db, ids[0])
    now = clock.utcnow()
    stale = claim_batch(ctx.db, batch_id, 3, 1, now=now)
    assert claim_batch(ctx.db, batch_id, 3, 1, now=now + timedelta(seconds=10)) is not None
    assert settle_batch_unsent(ctx.db, stale, FAILED, "invalid_to", now=now) == 0
    assert release_batch(ctx.db, stale, 5, "error: Boom", False, now=now) is False
    state = rows(ctx.db, ids)
    assert {(row["status"], row["last_error"]) for row in state.values()} == {("processing", None)}


def test_a_holder_whose_batch_was_taken_over_during_its_wait_does_not_reopen_it(ctx, provider_model):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    batch_id = batch_of(ctx.db, ids[0])
    now = clock.utcnow()
    sealed = seal_batch_request(ctx.db, claim_batch(ctx.db, batch_id, 3, 1, now=now), now=now)
    with ctx.db.write() as conn:
        assert cancel_unsent(conn, [ids[1]], "recipient_deactivated", now=now) == [ids[1]]
    later = now + timedelta(seconds=10)
    taken_over = claim_batch(ctx.db, batch_id, 3, 1, now=later)
    assert taken_over is not None
    assert recheck_after_wait(ctx.db, sealed, now=later) == CLAIM_LOST, "the batch is another delivery's now"
    with ctx.db.read() as conn:
        batch = conn.execute(sa.text("SELECT sealed_at, attempt_count FROM email_batches")).one()
    assert batch.sealed_at is not None and batch.attempt_count == 2, "the takeover's state is untouched"
