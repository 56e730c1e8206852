"""One attempt to deliver an email, or a list of up to 100, written once.

    claim (a first attempt's payloads, rendered before it, frozen in the claim's own write)
    → leave out who may no longer get it → freeze or replay → seal the request
    → a rate slot, unless an operator paused sending (after a wait: the claim and the list read
      again; after a stall: no request) → the provider's window → the provider call
    → classify the answer → settle

Two ways of sending share this path: one email to POST /emails (`single.OneEmail`) and a list to
POST /emails/batch (`batch.EmailList`), as River's job completer has inline and batch
ways behind one "set state if still running". A way says how its claim, its list, its request and
its settles are written; this module says when each happens, so every promise is decided once.

The job's `now` decides what is due, claimable and expired. From the wait for a rate slot on, the
delivery's own moment is that `now` moved on by the time the delivery has taken (a monotonic
clock): a wait can last most of a claim, and the provider's window must be checked, and its answer
recorded, at the moment they happen.

Every settle carries the claim's number, so only the claim holder's decision counts. An exception
before the provider call releases the claim at once (the email waits for its retry time, nothing
was sent); once a request may have started, the claim stands and the outcome is unknown.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from portal.core import clock
from portal.outbox.ground import metrics, pause
from portal.outbox.ground import provider as answers
from portal.outbox.ground.families import Family
from portal.outbox.ground.handles import PortalContext
from portal.outbox.ground.retry import family_max_attempts, family_retry_delay
from portal.outbox.ground.statuses import CLAIM_LOST, DEAD_LETTER, DELIVERY_EXHAUSTED, SENDING_PAUSED, UNKNOWN_OUTCOME
from portal.outbox.send.freeze import FreezeError
from portal.outbox.send.rate_limit import OPERATOR_PAUSED, rate_limit_for

log = logging.getLogger(__name__)
SKIPPED, SETTLED, RETRYING, NOT_YET_DUE = "skipped", "settled", "retry", "not_yet_due"
# Released after a wait for a rate slot: nothing was sent, so no attempt is used up.
RATE_WAITED = "rate_waited"
RATE_LIMIT_WAIT = "rate_limit_wait"
# Released because an operator paused its family or all sending: nothing was sent, no attempt is
# used, and the row is parked for the resume (ground/pause.py).
PAUSED = "paused"
# After a rate-limit wait that gave up: soon, since nothing is wrong with the email.
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


@dataclass(frozen=True)
class Release:
    """The claim ends with nothing settled: the email waits `delay` seconds for its next attempt."""

    delay: float
    reason: str
    unknown: bool = False  # a request may have been taken (a lost answer, a 5xx)
    given_back: bool = False  # nothing was sent and nothing went wrong (a wait for a slot): no attempt used
    answer: object = None  # the provider's answer to the last request made, if one came
    withdraw: bool = False  # the request sealed last was never made


@dataclass(frozen=True)
class Unsent:
    """A final state in which no message ID is held: failed, or a dead letter (exhausted, unknown
    outcome). A row that may have gone out always ends unknown_outcome, whatever is asked."""

    status: str
    reason: str
    answer: object = None
    withdraw: bool = False


class Claimed(Protocol):
    """What one attempt holds once claimed: a row, or a batch and its members."""

    @property
    def attempt(self) -> int: ...  # the claim's number: every settle carries it

    @property
    def outcome_unknown(self) -> bool: ...  # a request of an earlier attempt may have been taken

    @property
    def window_start(self) -> str | None: ...  # when the key was first used, as far as we know

    @property
    def carrier(self) -> str | None: ...


class Way(Protocol):
    """How one way of sending writes each step of the path (see the module's docstring)."""

    def claim(self, ctx: PortalContext, family: Family, *, now: datetime) -> Claimed | None: ...

    def seconds_until_due(self, ctx: PortalContext, *, now: datetime) -> float | None: ...

    def left_out(self, ctx: PortalContext, claimed: Claimed, *, now: datetime) -> DeliveryOutcome | None: ...

    def prepare(self, ctx: PortalContext, claimed: Claimed, family: Family, *, now: datetime) -> Claimed | None: ...

    def seal(
        self, ctx: PortalContext, claimed: Claimed, *, now: datetime, refused: answers.ProviderAnswer | None
    ) -> Claimed | None: ...

    def after_wait(self, ctx: PortalContext, claimed: Claimed, *, now: datetime) -> object: ...

    def call(self, ctx: PortalContext, claimed: Claimed, family: Family): ...

    def sent(self, ctx: PortalContext, claimed: Claimed, family: Family, answer, *, at: datetime) -> None: ...

    def unsent(self, ctx: PortalContext, claimed: Claimed, unsent: Unsent, *, at: datetime) -> None: ...

    def refused(self, ctx: PortalContext, claimed: Claimed, answer, *, at: datetime) -> DeliveryOutcome: ...

    def release(self, ctx: PortalContext, claimed: Claimed, release: Release, *, at: datetime) -> bool: ...


def deliver(ctx: PortalContext, way: Way, family: Family, *, now: datetime) -> DeliveryOutcome:
    settings = ctx.settings
    started = time.monotonic()

    def moment() -> datetime:
        return now + timedelta(seconds=time.monotonic() - started)

    claimed = way.claim(ctx, family, now=now)
    if claimed is None:
        wait = way.seconds_until_due(ctx, now=now)
        if wait is not None:
            # Early: a copy published late, or RQ's scheduler (whole seconds) a moment before the
            # retry time. The message comes back when it is due; the retry time stands.
            return DeliveryOutcome(NOT_YET_DUE, "not_yet_due", delay_seconds=wait)
        # Settled, in flight under a live claim, or missing: this delivery does nothing.
        return DeliveryOutcome(SKIPPED, "not_claimable")
    if claimed.attempt > family_max_attempts(family, settings):
        return _settle(ctx, way, claimed, Unsent(DEAD_LETTER, DELIVERY_EXHAUSTED), now)
    left_out = way.left_out(ctx, claimed, now=now)
    if left_out is not None:
        return left_out
    try:
        claimed = way.prepare(ctx, claimed, family, now=now)
        if claimed is None:
            return DeliveryOutcome(SKIPPED, "settled_elsewhere")
        limit = rate_limit_for(ctx.redis, settings.redis_url, settings.resend_rate_limit_per_second)
    except FreezeError:
        if claimed.outcome_unknown:
            # A request may have been taken, and its payload can no longer be sent byte for byte:
            # a different body under its key is no retry. A person decides.
            return _settle(ctx, way, claimed, Unsent(DEAD_LETTER, UNKNOWN_OUTCOME), now)
        return _release_after(ctx, way, claimed, family, FreezeError.__name__, now)
    except Exception as error:
        # Nothing reached the provider on this attempt: the retry finds it due, not claimed.
        return _release_after(ctx, way, claimed, family, type(error).__name__, now)

    # A wait for a rate slot ends in time for the request to finish inside the claim. The claim was
    # stamped at `now` (this delivery's start), not when it ran after the render (a report's PDF):
    # counting from then would let a long render push the request past the claim's expiry.
    deadline = started + settings.outbox_claim_seconds - settings.provider_timeout_seconds
    answer = None
    for _ in range(RATE_LIMITED_TRIES):
        # Seal first, then take the slot: the request then follows its slot at once.
        sealed = way.seal(ctx, claimed, now=moment(), refused=answer)
        if sealed is None:
            return DeliveryOutcome(SKIPPED, "not_ours")
        if isinstance(sealed, DeliveryOutcome):
            return sealed  # the request cannot be made whole: settled
        claimed = sealed
        try:
            taken, changed = limit.take_slot(
                deadline,
                recheck=lambda held=claimed: way.after_wait(ctx, held, now=moment()),
                gate=pause.gate_for(family.name, settings.provider_timeout_seconds),
            )
        except Exception as error:
            if answer is not None:
                break  # the 429 stands: a retry no sooner than its retry-after
            return _release_after(ctx, way, claimed, family, type(error).__name__, moment(), withdraw=True)
        if changed == CLAIM_LOST:
            return DeliveryOutcome(SKIPPED, CLAIM_LOST)
        if changed == OPERATOR_PAUSED:
            # An operator paused this family or all sending: no slot was taken, nothing is sent.
            return _paused(ctx, way, claimed, moment())
        if isinstance(changed, DeliveryOutcome):
            return changed  # nobody is left to send to
        if changed is not None:
            # Someone left during the wait: the list is sealed again, and takes a new slot.
            claimed, answer = changed, None
            continue
        if taken and time.monotonic() > deadline:
            # Stalled after the slot, past the time a request could still finish inside the claim:
            # another delivery may hold it now, and have sent it.
            taken = False
        if not taken:
            if answer is not None:
                break  # the 429 stands; the request sealed for the next try was never made
            delay = max(RATE_WAIT_RETRY_SECONDS, limit.pause_left())
            if not way.release(
                ctx, claimed, Release(delay, RATE_LIMIT_WAIT, given_back=True, withdraw=True), at=moment()
            ):
                return DeliveryOutcome(SKIPPED, CLAIM_LOST)
            return DeliveryOutcome(
                RATE_WAITED, RATE_LIMIT_WAIT, delay_seconds=delay, attempt=claimed.attempt - 1, carrier=claimed.carrier
            )
        # Checked immediately before the call, with a margin for the call itself and the clocks: the
        # provider may forget the key before a late request lands, and a resend could be a second email.
        if claimed.outcome_unknown and provider_window_closing(claimed.window_start, settings, now=moment()):
            return _settle(ctx, way, claimed, Unsent(DEAD_LETTER, UNKNOWN_OUTCOME, withdraw=True), moment())
        answer = way.call(ctx, claimed, family)
        observe_answer(limit, answer)
        metrics.provider_answered(family.name, answer)
        # A 429 is a definite "not taken" (the key is not used): after the pause it set for every
        # worker, this claim may try again at once instead of waiting out a retry delay.
        if answer.status != 429:
            return _record_answer(ctx, way, claimed, family, answer, moment())
    return _record_answer(ctx, way, claimed, family, answer, moment(), withdraw=True)


def _record_answer(
    ctx: PortalContext, way: Way, claimed: Claimed, family: Family, answer, at: datetime, withdraw: bool = False
) -> DeliveryOutcome:
    """Settle as the provider's answer (which came `at`) says. `withdraw`: a request sealed after
    this answer was never made (a 429 stood, and no slot came for the next try)."""
    if answer.kind == answers.ACCEPTED:
        way.sent(ctx, claimed, family, answer, at=at)
        return DeliveryOutcome(SETTLED, "sent")
    if answer.kind == answers.UNKNOWN_OUTCOME or (answer.kind == answers.REJECTED and claimed.outcome_unknown):
        # A conflict proves an earlier request reached the provider, not whether it sent the email.
        return _settle(ctx, way, claimed, Unsent(DEAD_LETTER, UNKNOWN_OUTCOME, answer=answer), at)
    if answer.kind == answers.REJECTED:
        return way.refused(ctx, claimed, answer, at=at)
    reason = answer.reason or "retry"
    delay = family_retry_delay(family, claimed.attempt, ctx.settings, answer.retry_after)
    way.release(ctx, claimed, Release(delay, reason, answer.ambiguous, answer=answer, withdraw=withdraw), at=at)
    return DeliveryOutcome(RETRYING, reason, delay_seconds=delay, attempt=claimed.attempt, carrier=claimed.carrier)


def _settle(ctx: PortalContext, way: Way, claimed: Claimed, unsent: Unsent, at: datetime) -> DeliveryOutcome:
    way.unsent(ctx, claimed, unsent, at=at)
    return DeliveryOutcome(SETTLED, unsent.reason)


def _release_after(
    ctx: PortalContext, way: Way, claimed: Claimed, family: Family, error: str, at: datetime, withdraw: bool = False
) -> DeliveryOutcome:
    delay = family_retry_delay(family, claimed.attempt, ctx.settings)
    reason = f"error: {error}"
    way.release(ctx, claimed, Release(delay, reason, withdraw=withdraw), at=at)
    return DeliveryOutcome(RETRYING, reason, delay_seconds=delay, attempt=claimed.attempt, carrier=claimed.carrier)


def _paused(ctx: PortalContext, way: Way, claimed: Claimed, at: datetime) -> DeliveryOutcome:
    """An operator paused this family (or all sending): the claim is given back with no attempt
    used and nothing failed, the request sealed for it marked as never made, and the row parked:
    due only after PARKED_SECONDS, unless the resume makes it due first (ground/pause.py)."""
    release = Release(pause.PARKED_SECONDS, SENDING_PAUSED, given_back=True, withdraw=True)
    if not way.release(ctx, claimed, release, at=at):
        return DeliveryOutcome(SKIPPED, CLAIM_LOST)
    return DeliveryOutcome(PAUSED, SENDING_PAUSED, attempt=claimed.attempt - 1, carrier=claimed.carrier)


def observe_answer(limit, answer) -> None:
    """Tell the shared limit what the provider said. Never raises: the answer must be recorded
    next, and a Redis failure here must not turn an accepted email into an unknown outcome."""
    try:
        limit.observe(answer.status, answer.headers)
    except Exception as error:
        log.warning("rate limit not updated from the provider's headers: %s", type(error).__name__)


def provider_window_closing(first_used_at: str | None, settings, *, now: datetime) -> bool:
    """Whether at `now` the provider may soon forget a key first used at `first_used_at`."""
    if first_used_at is None:
        return False
    age = (now - clock.parse(first_used_at)).total_seconds()
    return age >= settings.provider_idempotency_window_seconds - settings.provider_window_margin_seconds
