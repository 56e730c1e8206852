"""One delivery of one batch: claim it, render its first attempt, seal (the seal's write stores
that render as the members' frozen payloads), wait for a rate slot, send the list in one request,
settle every member as the answer says. A first request is usually rendered before the claim, and
the claim stores it and seals in its own write (batches.claim_batch): one write lock fewer.

The same promises as a single row's delivery (delivery.py), for the batch as a whole:
- one rate slot per request, and a 429 is a definite "not taken": the claim tries again after the
  shared pause, at most RATE_LIMITED_TRIES times;
- a lost answer or a 5xx leaves every member flagged as possibly sent; the retry sends the same list
  under the same key, rebuilt from the frozen payloads in position order, so its body is the same
  bytes, and once the provider's window is closing the members settle as unknown_outcome instead;
- an exception before the provider call releases the batch at once, nothing sent.

Strict validation (provider.py says why): the answer is all or nothing, so a 4xx proves nothing of
this batch was sent, and its members go on alone (`dissolve_batch`), where the one the provider
refuses fails by itself.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime, timedelta

from portal.outbox import metrics
from portal.outbox import provider as answers
from portal.outbox.batch_outcomes import dissolve_batch, mark_batch_sent, release_batch, settle_batch_unsent
from portal.outbox.batch_seal import let_members_go, recheck_after_wait, seal_batch_request
from portal.outbox.batches import claim_batch, first_attempt_inputs, seconds_until_batch_due
from portal.outbox.claimed_batch import ClaimedBatch
from portal.outbox.claims import CLAIM_LOST
from portal.outbox.delivery import (
    NOT_YET_DUE,
    RATE_LIMITED_TRIES,
    RATE_WAIT_RETRY_SECONDS,
    RATE_WAITED,
    RETRYING,
    SETTLED,
    SKIPPED,
    DeliveryOutcome,
    observe_answer,
    provider_window_closing,
)
from portal.outbox.families import Family
from portal.outbox.freeze import FreezeError, ensure_store_available, payload_of
from portal.outbox.handles import PortalContext
from portal.outbox.provider import BatchItem
from portal.outbox.publish import publish_outbox_rows
from portal.outbox.rate_limit import rate_limit_for
from portal.outbox.retry import family_max_attempts, family_retry_delay
from portal.outbox.statuses import DEAD_LETTER, DELIVERY_EXHAUSTED, FAILED, UNKNOWN_OUTCOME

log = logging.getLogger(__name__)
CANNOT_RIDE = "batch_cannot_carry"  # a member's payload a batch may not hold (an attachment)
WOULD_NOT_RENDER = "batch_render_failed"


def deliver_batch(ctx: PortalContext, batch_id: str, family: Family, *, now: datetime) -> DeliveryOutcome:
    settings, db = ctx.settings, ctx.db
    started = time.monotonic()

    def moment() -> datetime:
        return now + timedelta(seconds=time.monotonic() - started)

    batch = claim_batch(
        db,
        batch_id,
        settings.outbox_claim_seconds,
        settings.outbox_republish_after_seconds,
        now=now,
        payloads=_rendered_before_the_claim(ctx, batch_id, family, now),
        max_attempts=family_max_attempts(family, settings),
    )
    if batch is None:
        wait = seconds_until_batch_due(db, batch_id, now=now)
        if wait is not None:
            return DeliveryOutcome(NOT_YET_DUE, "not_yet_due", delay_seconds=wait)
        return DeliveryOutcome(SKIPPED, "not_claimable")
    if batch.attempt > family_max_attempts(family, settings):
        settle_batch_unsent(db, batch, DEAD_LETTER, DELIVERY_EXHAUSTED, now=now)
        return DeliveryOutcome(SETTLED, DELIVERY_EXHAUSTED)
    try:
        payloads = _payloads_to_freeze(ctx, batch, family, now)
        limit = rate_limit_for(ctx.redis, settings.redis_url, settings.resend_rate_limit_per_second)
    except FreezeError:
        if batch.sealed:
            # A request of this list may have been sent, and the list can no longer be rebuilt
            # byte for byte: a different body under its key is no retry. A person decides.
            settle_batch_unsent(db, batch, DEAD_LETTER, UNKNOWN_OUTCOME, now=now)
            return DeliveryOutcome(SETTLED, UNKNOWN_OUTCOME)
        raise
    except Exception as error:
        return _release_after(db, batch, error, settings, family, now)

    # As for a single row: the wait ends in time for the send to finish inside the claim.
    deadline = started + settings.outbox_claim_seconds - settings.provider_timeout_seconds
    answer, sent, tries = None, batch, 0
    while tries < RATE_LIMITED_TRIES:
        # Seal first, then take the slot: the request then follows its slot at once. The first
        # seal stores the first attempt's payloads in its own write (or the claim did, and sealed),
        # and every seal reads back what is stored: that is what is sent.
        if sent.sealed_by_claim and tries == 0 and answer is None:
            sealed = sent
        else:
            sealed = seal_batch_request(
                db, sent, now=moment(), previous_answer=answer and _answer_text(answer), payloads=payloads
            )
        if sealed is None:
            return DeliveryOutcome(SKIPPED, "batch_not_ours")
        sent, payloads = sealed, ()
        messages = sent.messages
        if any(member.id not in messages for member in sent.members):
            # The list cannot be built whole, and a request of it may have gone before: a person decides.
            settle_batch_unsent(db, sent, DEAD_LETTER, UNKNOWN_OUTCOME, now=moment(), withdraw=True)
            return DeliveryOutcome(SETTLED, UNKNOWN_OUTCOME)
        try:
            taken, changed = limit.take_slot(
                deadline, recheck=lambda batch=sent: recheck_after_wait(db, batch, now=moment())
            )
            if changed == CLAIM_LOST:
                return DeliveryOutcome(SKIPPED, CLAIM_LOST)
            if changed is not None:
                # A member left during the wait: the list is sealed again, and takes a new slot.
                answer, sent = None, changed
                continue
            if taken and time.monotonic() > deadline:
                # Stalled after the slot, past the time a request could still finish inside the
                # claim: another delivery may hold it, and have sent the list.
                taken = False
            if not taken:
                if answer is not None:
                    # The 429 stands; the request sealed for the next try was never made.
                    return _record_answer(ctx, sent, family, answer, moment(), withdraw=True)
                delay = max(RATE_WAIT_RETRY_SECONDS, limit.pause_left())
                if not release_batch(
                    db, sent, delay, "rate_limit_wait", False, now=moment(), counts_as_attempt=False, withdraw=True
                ):
                    return DeliveryOutcome(SKIPPED, CLAIM_LOST)
                return DeliveryOutcome(RATE_WAITED, "rate_limit_wait", delay_seconds=delay, carrier=sent.carrier)
        except Exception as error:
            return _release_after(db, sent, error, settings, family, moment(), withdraw=True)
        # Checked immediately before the call, as for a single row: after a wait, the provider may
        # be about to forget the key an earlier request used.
        if sent.outcome_unknown and provider_window_closing(sent.sealed_at, settings, now=moment()):
            settle_batch_unsent(db, sent, DEAD_LETTER, UNKNOWN_OUTCOME, now=moment(), withdraw=True)
            return DeliveryOutcome(SETTLED, UNKNOWN_OUTCOME)
        tries += 1
        items = [
            BatchItem(messages[member.id], to=member.recipient, family=family.name, outbox_id=member.id)
            for member in sent.members
        ]
        answer = ctx.provider.send_batch(items, idempotency_key=sent.provider_key)
        observe_answer(limit, answer)
        metrics.provider_answered(family.name, answer)
        if answer.status != 429:
            break
    return _record_answer(ctx, sent, family, answer, moment())


def _rendered_before_the_claim(ctx: PortalContext, batch_id: str, family: Family, now: datetime) -> list[dict]:
    """A batch's first request, rendered before its claim (first_attempt_inputs), so that the claim
    stores the payloads and seals in its own write. Empty, and the delivery renders after its
    claim, when anything is out of the ordinary: no such first request, a member that does not
    render, or one a batch cannot carry."""
    inputs = first_attempt_inputs(ctx.db, batch_id, now=now)
    if not inputs:
        return []
    ensure_store_available(ctx.db)
    try:
        data = [json.loads(template_input) for _, template_input in inputs]
        payloads = [
            payload_of(outbox_id, rendered, now=now) if not isinstance(rendered, Exception) else None
            for (outbox_id, _), rendered in zip(inputs, family.render_many(data, ctx.settings, now=now), strict=True)
        ]
    except (ValueError, FreezeError):
        return []
    if any(payload is None or payload["attachment_content"] is not None for payload in payloads):
        return []
    return payloads


def _payloads_to_freeze(ctx: PortalContext, batch: ClaimedBatch, family: Family, now: datetime) -> list[dict]:
    """A first attempt's payloads (payload_of), rendered now, for the members no earlier attempt
    froze; the seal stores them. Before the seal, a member whose message a batch cannot carry, or
    that does not render, leaves and goes on alone. A sealed batch renders nothing: every member's
    frozen payload must be there (read with the claim), or FreezeError."""
    messages = batch.messages
    if batch.sealed:
        if any(member.id not in messages for member in batch.members):
            raise FreezeError("a sealed batch lacks a member's frozen payload")
        return []
    ensure_store_available(ctx.db)
    misfits = {member.id: CANNOT_RIDE for member in batch.members if _cannot_ride(messages.get(member.id))}
    to_render, inputs, payloads = [], [], []
    for member in batch.members:
        if member.id not in messages:
            try:
                inputs.append(json.loads(member.template_input))
                to_render.append(member)
            except ValueError as error:
                _would_not_render(member, error, misfits)
    for member, rendered in zip(to_render, family.render_many(inputs, ctx.settings, now=now), strict=True):
        try:
            if isinstance(rendered, Exception):
                raise rendered
            payload = payload_of(member.id, rendered, now=now)
        except Exception as error:
            _would_not_render(member, error, misfits)
            continue
        if payload["attachment_content"] is not None:
            misfits[member.id] = CANNOT_RIDE
            continue
        payloads.append(payload)
    for reason in set(misfits.values()):
        _go_alone(ctx, batch, [outbox_id for outbox_id, why in misfits.items() if why == reason], reason, now)
    return payloads


def _would_not_render(member, error: Exception, misfits: dict) -> None:
    log.warning("batch member %s did not render (%s); it goes alone", member.id, type(error).__name__)
    misfits[member.id] = WOULD_NOT_RENDER


def _cannot_ride(message) -> bool:
    return message is not None and bool(message.attachments)


def _go_alone(ctx: PortalContext, batch: ClaimedBatch, outbox_ids: list[str], reason: str, now: datetime) -> None:
    left = let_members_go(ctx.db, batch, outbox_ids, reason, now=now)
    if left:
        _publish(ctx, left, now)


def _publish(ctx: PortalContext, outbox_ids: list[str], now: datetime) -> None:
    """Members that left go on as single emails: their own messages, at once (the relay would find
    them too, a stale period later)."""
    publish_outbox_rows(
        ctx.db,
        ctx.redis,
        outbox_ids,
        request_id="batch",
        job_timeout=ctx.settings.outbox_job_timeout_seconds,
        families=ctx.families,
        now=now,
    )


def _answer_text(answer) -> str:
    """The answer as the console's request log keeps it: status and reason, never an address."""
    return f"{answer.status or 'no answer'}: {answer.reason or answer.kind}"


def _record_answer(
    ctx: PortalContext, batch: ClaimedBatch, family: Family, answer, at: datetime, withdraw: bool = False
) -> DeliveryOutcome:
    """Settle every member as the answer says. `withdraw`: a request sealed after this answer was
    never made (a 429 stood, and no slot came for the next try)."""
    db, settings = ctx.db, ctx.settings
    said = _answer_text(answer)
    if answer.kind == answers.ACCEPTED:
        mark_batch_sent(db, batch, list(answer.message_ids), now=at)
        for member in batch.unsettled:
            metrics.email_accepted(family.name, member.created_at)
        return DeliveryOutcome(SETTLED, "sent")
    if answer.kind == answers.UNKNOWN_OUTCOME or (answer.kind == answers.REJECTED and batch.outcome_unknown):
        settle_batch_unsent(db, batch, DEAD_LETTER, UNKNOWN_OUTCOME, now=at, request_answer=said)
        return DeliveryOutcome(SETTLED, UNKNOWN_OUTCOME)
    if answer.kind == answers.REJECTED:
        left = dissolve_batch(db, batch, answer.reason or FAILED, now=at, request_answer=said)
        if left:
            _publish(ctx, left, at)
        return DeliveryOutcome(SETTLED, "batch_dissolved")
    delay = family_retry_delay(family, batch.attempt, settings, answer.retry_after)
    release_batch(
        db, batch, delay, answer.reason or "retry", answer.ambiguous, now=at, request_answer=said, withdraw=withdraw
    )
    return DeliveryOutcome(
        RETRYING, answer.reason or "retry", delay_seconds=delay, attempt=batch.attempt, carrier=batch.carrier
    )


def _release_after(
    db, batch: ClaimedBatch, error: Exception, settings, family: Family, now: datetime, withdraw: bool = False
):
    delay = family_retry_delay(family, batch.attempt, settings)
    reason = f"error: {type(error).__name__}"
    release_batch(db, batch, delay, reason, False, now=now, withdraw=withdraw)
    return DeliveryOutcome(RETRYING, reason, delay_seconds=delay, attempt=batch.attempt, carrier=batch.carrier)
