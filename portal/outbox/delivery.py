"""One delivery of one outbox row: render a first attempt, claim (and freeze a first attempt in
the same transaction), check, replay, wait for a rate slot, check the provider's window, send, settle.

The job's `now` decides what is due, claimable and expired. From the wait for a rate slot on, the
delivery's own moment is that `now` moved on by the time the delivery has taken (a monotonic clock):
a wait can last most of a claim, and the provider's window must be checked, and its answer
recorded, at the moment they happen.

Every settle carries the claim's attempt number, so only the claim holder's decision counts. An
exception before the provider call releases the claim at once (the row waits for its retry time,
nothing was sent); once a send may have started, the claim stands and the row's outcome is unknown.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from portal.core import clock
from portal.outbox import metrics
from portal.outbox import provider as answers
from portal.outbox.claims import CLAIM_LOST, AfterWait, ClaimedRow, recheck_after_wait
from portal.outbox.families import Family
from portal.outbox.freeze import claim_and_freeze, first_attempt_input, freeze_or_replay, payload_of, replay_frozen
from portal.outbox.handles import PortalContext
from portal.outbox.rate_limit import rate_limit_for
from portal.outbox.retry import family_max_attempts, family_retry_delay
from portal.outbox.rows import mark_retry, mark_sent, seconds_until_due, settle_unsent
from portal.outbox.statuses import (
    CANCELLED,
    DEAD_LETTER,
    DELIVERY_EXHAUSTED,
    FAILED,
    RECIPIENT_SUPPRESSED,
    SUPPRESSED,
    UNKNOWN_OUTCOME,
)

log = logging.getLogger(__name__)
SKIPPED, SETTLED, RETRYING, NOT_YET_DUE = "skipped", "settled", "retry", "not_yet_due"
# Released after a wait for a rate slot: nothing was sent, so no attempt is used up.
RATE_WAITED = "rate_waited"
# After a rate-limit wait that gave up: soon, since nothing is wrong with the row.
RATE_WAIT_RETRY_SECONDS = 1.0
# Provider requests one claim may make while the provider answers 429 (each after a shared pause).
RATE_LIMITED_TRIES = 3


@dataclass(frozen=True)
class DeliveryOutcome:
    kind: str
    detail: str
    delay_seconds: float | None = None
    attempt: int = 0
    # The row ID whose message carries the next try (a batch's: one of its members); None: the same.
    carrier: str | None = None


def deliver_outbox_row(ctx: PortalContext, outbox_id: str, family: Family, *, now: datetime) -> DeliveryOutcome:
    settings, db = ctx.settings, ctx.db
    started = time.monotonic()

    def moment() -> datetime:
        return now + timedelta(seconds=time.monotonic() - started)

    max_attempts = family_max_attempts(family, settings)
    payload, render_error = _first_attempt_payload(db, outbox_id, family, settings, now)
    row, message = claim_and_freeze(
        db,
        outbox_id,
        payload,
        claim_seconds=settings.outbox_claim_seconds,
        republish_after_seconds=settings.outbox_republish_after_seconds,
        max_attempts=max_attempts,
        now=now,
    )
    if row is None:
        wait = seconds_until_due(db, outbox_id, now=now)
        if wait is not None:
            # Early: a copy published late, or RQ's scheduler (whole seconds) a moment before the
            # retry time. The message comes back when the row is due; the retry time stands.
            return DeliveryOutcome(NOT_YET_DUE, "not_yet_due", delay_seconds=wait)
        # Settled, in flight under a live claim, or missing: this delivery does nothing.
        return DeliveryOutcome(SKIPPED, "not_claimable")
    if row.attempt_count > max_attempts:
        return _settle(db, row, DEAD_LETTER, DELIVERY_EXHAUSTED, DELIVERY_EXHAUSTED, now)
    if row.suppressed:
        settled_as = SUPPRESSED if not row.outcome_unknown else UNKNOWN_OUTCOME
        return _settle(db, row, SUPPRESSED, RECIPIENT_SUPPRESSED, settled_as, now)
    if row.cancel_reason is not None:
        # Cancelled while an earlier delivery held it: never sent now (if that one may have sent
        # it, a person decides).
        return _settle(
            db, row, CANCELLED, row.cancel_reason, CANCELLED if not row.outcome_unknown else UNKNOWN_OUTCOME, now
        )

    try:
        if message is None:
            message = _message_to_send(db, row, family, settings, render_error, now)
        if message is None:
            return DeliveryOutcome(SKIPPED, "settled_elsewhere")
        limit = rate_limit_for(ctx.redis, settings.redis_url, settings.resend_rate_limit_per_second)
    except Exception as error:
        # Nothing reached the provider on this attempt: the retry finds the row due, not claimed.
        return _release_after(db, row, error, settings, family, now)

    # A wait for a rate slot ends in time for the send to finish inside the claim. The claim was
    # stamped at `now` (this delivery's start), not when the claim ran after the render (a report's
    # PDF): counting from then would let a long render push the send past the claim's expiry.
    deadline = started + settings.outbox_claim_seconds - settings.provider_timeout_seconds
    answer = _send(ctx, row, family, message, limit, deadline, moment)
    if isinstance(answer, DeliveryOutcome):
        return answer
    return _record_answer(db, row, family, settings, answer, moment())


def _first_attempt_payload(db, outbox_id: str, family: Family, settings, now: datetime):
    """A first attempt is rendered before the claim, so its payload is frozen in the claim's own
    transaction. A row an earlier attempt froze is never rendered: its payload is replayed.

    Returns (payload, render error); a render error still lets the claim count this attempt."""
    template_input = first_attempt_input(db, outbox_id, now=now)
    if template_input is None:
        return None, None
    try:
        return payload_of(outbox_id, family.render(json.loads(template_input), settings, now=now), now=now), None
    except Exception as error:
        return None, error


def _message_to_send(db, row: ClaimedRow, family: Family, settings, render_error, now: datetime):
    """The message of a claimed row the claim did not freeze: an earlier attempt's, replayed, or
    (None) none, when the row settled elsewhere meanwhile."""
    if row.first_attempt_at is not None:
        message = replay_frozen(db, row.id)
        if message is not None:
            return message
    if render_error is not None:
        raise render_error
    # A first attempt the read before the claim did not see as one (it became claimable in
    # between): render and freeze now, after the claim.
    return freeze_or_replay(db, row.id, family.render(json.loads(row.template_input), settings, now=now), now=now)


def _send(ctx, row: ClaimedRow, family: Family, message, limit, deadline: float, moment: Callable[[], datetime]):
    """The provider's answer, or the outcome that ended the attempt before one came."""
    db, settings = ctx.db, ctx.settings
    answer = None
    for _ in range(RATE_LIMITED_TRIES):
        try:
            taken, stop = limit.take_slot(deadline, recheck=lambda: recheck_after_wait(db, row, now=moment()))
            if stop is not None:
                return _stopped(db, row, stop, moment())
            if taken and time.monotonic() > deadline:
                # Stalled after the slot, past the time a request could still finish inside the
                # claim: another delivery may hold the row, and have sent it.
                taken = False
            if not taken:
                if answer is not None:
                    break  # the 429 stands: a retry no sooner than its retry-after
                return _release_after_wait(db, row, max(RATE_WAIT_RETRY_SECONDS, limit.pause_left()), moment())
        except Exception as error:
            if answer is not None:
                break
            return _release_after(db, row, error, settings, family, moment())
        # Checked immediately before the call, with a margin for the call itself and the clocks: the
        # provider may forget the key before a late request lands, and a resend could be a second email.
        if row.outcome_unknown and provider_window_closing(row.first_attempt_at, settings, now=moment()):
            return _settle(db, row, DEAD_LETTER, UNKNOWN_OUTCOME, UNKNOWN_OUTCOME, moment())
        answer = ctx.provider.send(
            message, to=row.recipient, idempotency_key=row.provider_key, family=family.name, outbox_id=row.id
        )
        observe_answer(limit, answer)
        metrics.provider_answered(family.name, answer)
        # A 429 is a definite "not taken" (the key is not used): after the pause it set for every
        # worker, this claim may try again at once instead of waiting out a retry delay.
        if answer.status != 429:
            break
    return answer


def _record_answer(db, row: ClaimedRow, family: Family, settings, answer, at: datetime) -> DeliveryOutcome:
    """Settle the row as the provider's answer (which came `at`) says."""
    if answer.kind == answers.ACCEPTED:
        mark_sent(db, row.id, answer.message_id, now=at)
        metrics.email_accepted(family.name, row.created_at)
        return DeliveryOutcome(SETTLED, "sent")
    if answer.kind == answers.UNKNOWN_OUTCOME or (answer.kind == answers.REJECTED and row.outcome_unknown):
        # A conflict proves an earlier request reached the provider, not whether it sent the email.
        return _settle(db, row, DEAD_LETTER, UNKNOWN_OUTCOME, UNKNOWN_OUTCOME, at)
    if answer.kind == answers.REJECTED:
        return _settle(db, row, FAILED, answer.reason, "failed", at)
    delay = family_retry_delay(family, row.attempt_count, settings, answer.retry_after)
    mark_retry(db, row.id, row.attempt_count, delay, answer.reason or "retry", outcome_unknown=answer.ambiguous, now=at)
    return DeliveryOutcome(RETRYING, answer.reason or "retry", delay_seconds=delay, attempt=row.attempt_count)


def observe_answer(limit, answer) -> None:
    """Tell the shared limit what the provider said. Never raises: the answer must be recorded
    next, and a Redis failure here must not turn an accepted email into an unknown outcome."""
    try:
        limit.observe(answer.status, answer.headers)
    except Exception as error:
        log.warning("rate limit not updated from the provider's headers: %s", type(error).__name__)


def _settle(db, row: ClaimedRow, status: str, reason: str | None, detail: str, now: datetime) -> DeliveryOutcome:
    settle_unsent(db, row.id, row.attempt_count, status, reason, now=now)
    return DeliveryOutcome(SETTLED, detail)


def _release(db, row: ClaimedRow, delay: float, reason: str, now: datetime) -> DeliveryOutcome:
    mark_retry(db, row.id, row.attempt_count, delay, reason, outcome_unknown=False, now=now)
    return DeliveryOutcome(RETRYING, reason, delay_seconds=delay, attempt=row.attempt_count)


def _stopped(db, row: ClaimedRow, stop: AfterWait, now: datetime) -> DeliveryOutcome:
    """What a wait changed ends the attempt before its request: the claim is gone (nothing to
    write), or the row must no longer be sent."""
    if stop.status == CLAIM_LOST:
        return DeliveryOutcome(SKIPPED, CLAIM_LOST)
    settled_as = stop.status if not row.outcome_unknown else UNKNOWN_OUTCOME
    return _settle(db, row, stop.status, stop.reason, settled_as, now)


def _release_after_wait(db, row: ClaimedRow, delay: float, now: datetime) -> DeliveryOutcome:
    if not mark_retry(
        db, row.id, row.attempt_count, delay, "rate_limit_wait", outcome_unknown=False, now=now, counts_as_attempt=False
    ):
        return DeliveryOutcome(SKIPPED, CLAIM_LOST)
    return DeliveryOutcome(RATE_WAITED, "rate_limit_wait", delay_seconds=delay, attempt=row.attempt_count - 1)


def _release_after(db, row: ClaimedRow, error: Exception, settings, family: Family, now: datetime) -> DeliveryOutcome:
    delay = family_retry_delay(family, row.attempt_count, settings)
    return _release(db, row, delay, f"error: {type(error).__name__}", now)


def provider_window_closing(first_attempt_at: str | None, settings, *, now: datetime) -> bool:
    """Whether at `now` the provider may soon forget the key the first attempt used."""
    if first_attempt_at is None:
        return False
    age = (now - clock.parse(first_attempt_at)).total_seconds()
    return age >= settings.provider_idempotency_window_seconds - settings.provider_window_margin_seconds
