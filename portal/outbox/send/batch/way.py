"""A list of up to 100 emails sent together to POST /emails/batch under one key: the attempt path's
way for a batch (attempt.py says when each step happens; this module says how it is written for a
list, batch/claim.py what facts every statement of a batch keeps).

What a list adds to one email's path:
- **its first request is rendered before its claim**, and the claim stores the payloads and seals
  in its own write (batch.claim.claim_batch): one write lock fewer. Otherwise it renders after its
  claim, and the seal stores the payloads;
- **the seal** records each request just before it is made; every seal reads back what is stored,
  and that is what is sent. A retry sends the same list under the same key, rebuilt from the
  frozen payloads in position order, so its body is the same bytes;
- **members that cannot ride** (an attachment, a payload that would not render) leave before the
  seal and go on alone, under their own keys;
- **strict validation** (provider.py says why): the answer is all or nothing, so a 4xx proves
  nothing of this list was sent, and its members go on alone (`dissolve_batch`), where the one the
  provider refuses fails by itself.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass
from datetime import datetime

from portal.outbox.ground import metrics
from portal.outbox.ground.families import Family
from portal.outbox.ground.handles import PortalContext
from portal.outbox.ground.provider import BatchItem
from portal.outbox.ground.retry import family_max_attempts
from portal.outbox.ground.statuses import DEAD_LETTER, FAILED, UNKNOWN_OUTCOME
from portal.outbox.send.attempt import SETTLED, DeliveryOutcome, Release, Unsent
from portal.outbox.send.batch.claim import claim_batch, seconds_until_batch_due
from portal.outbox.send.batch.held import ClaimedBatch
from portal.outbox.send.batch.outcomes import dissolve_batch, mark_batch_sent, release_batch, settle_batch_unsent
from portal.outbox.send.batch.seal import let_members_go, recheck_after_wait, seal_batch_request
from portal.outbox.send.freeze import FreezeError, ensure_store_available, payload_of
from portal.outbox.write.publish import publish_outbox_rows

log = logging.getLogger(__name__)
CANNOT_RIDE = "batch_cannot_carry"  # a member's payload a batch may not hold (an attachment)
WOULD_NOT_RENDER = "batch_render_failed"


@dataclass(frozen=True)
class EmailList:
    batch_id: str
    # (member ID, stored input) of the batch's first request, read with the consumer's routing
    # (batch.claim.FIRST_ATTEMPT_INPUTS_OF_ROWS_BATCH); empty: the delivery renders after its claim.
    first_inputs: tuple = ()

    def claim(self, ctx: PortalContext, family: Family, *, now: datetime) -> ClaimedBatch | None:
        settings = ctx.settings
        return claim_batch(
            ctx.db,
            self.batch_id,
            settings.outbox_claim_seconds,
            settings.outbox_republish_after_seconds,
            now=now,
            payloads=self._rendered_before_the_claim(ctx, family, now),
            max_attempts=family_max_attempts(family, settings),
        )

    def _rendered_before_the_claim(self, ctx: PortalContext, family: Family, now: datetime) -> list[dict]:
        """A batch's first request, rendered before its claim (first_attempt_inputs), so that the
        claim stores the payloads and seals in its own write. Empty, and the delivery renders after
        its claim, when anything is out of the ordinary: no such first request, a member that does
        not render, or one a batch cannot carry."""
        inputs = self.first_inputs
        if not inputs:
            return []
        ensure_store_available(ctx.db)
        try:
            data = [json.loads(template_input) for _, template_input in inputs]
            rendered = family.render_many(data, ctx.settings, now=now)
            payloads = [
                payload_of(outbox_id, message, now=now) if not isinstance(message, Exception) else None
                for (outbox_id, _), message in zip(inputs, rendered, strict=True)
            ]
        except (ValueError, FreezeError):
            return []
        if any(payload is None or payload["attachment_content"] is not None for payload in payloads):
            return []
        return payloads

    def seconds_until_due(self, ctx: PortalContext, *, now: datetime) -> float | None:
        return seconds_until_batch_due(ctx.db, self.batch_id, now=now)

    def left_out(self, ctx: PortalContext, batch: ClaimedBatch, *, now: datetime) -> None:
        """Members that may not be sent left the list in the claim's own write (batch/claim.py)."""
        return None

    def prepare(self, ctx: PortalContext, batch: ClaimedBatch, family: Family, *, now: datetime) -> ClaimedBatch:
        """First-attempt payloads (payload_of), rendered now, for the members no earlier attempt
        froze; the seal stores them. Before the seal, a member whose message a batch cannot carry,
        or that does not render, leaves and goes on alone. A sealed batch renders nothing: every
        member's frozen payload must be there (read with the claim), or FreezeError."""
        messages = batch.messages
        if batch.sealed:
            if any(member.id not in messages for member in batch.members):
                raise FreezeError("a sealed batch lacks a member's frozen payload")
            return batch
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
        return dataclasses.replace(batch, to_freeze=tuple(payloads))

    def seal(self, ctx: PortalContext, batch: ClaimedBatch, *, now: datetime, refused=None):
        """Record the request about to be made, storing the payloads rendered for it; the batch as
        it will be sent, None when it is no longer ours, or the settle when the list cannot be
        built whole (a request of it may have gone before: a person decides)."""
        if batch.sealed_by_claim and refused is None:
            sealed = dataclasses.replace(batch, sealed_by_claim=False)
        else:
            sealed = seal_batch_request(
                ctx.db, batch, now=now, previous_answer=refused and _answer_text(refused), payloads=batch.to_freeze
            )
        if sealed is None:
            return None
        messages = sealed.messages
        if any(member.id not in messages for member in sealed.members):
            self.unsent(ctx, sealed, Unsent(DEAD_LETTER, UNKNOWN_OUTCOME, withdraw=True), at=now)
            return DeliveryOutcome(SETTLED, UNKNOWN_OUTCOME)
        return sealed

    def after_wait(self, ctx: PortalContext, batch: ClaimedBatch, *, now: datetime):
        return recheck_after_wait(ctx.db, batch, now=now)

    def call(self, ctx: PortalContext, batch: ClaimedBatch, family: Family):
        messages = batch.messages
        items = [
            BatchItem(messages[member.id], to=member.recipient, family=family.name, outbox_id=member.id)
            for member in batch.members
        ]
        return ctx.provider.send_batch(items, idempotency_key=batch.provider_key)

    def sent(self, ctx: PortalContext, batch: ClaimedBatch, family: Family, answer, *, at: datetime) -> None:
        mark_batch_sent(ctx.db, batch, list(answer.message_ids), now=at)
        for member in batch.unsettled:
            metrics.email_accepted(family.name, member.created_at)

    def unsent(self, ctx: PortalContext, batch: ClaimedBatch, unsent: Unsent, *, at: datetime) -> None:
        settle_batch_unsent(
            ctx.db,
            batch,
            unsent.status,
            unsent.reason,
            now=at,
            request_answer=unsent.answer and _answer_text(unsent.answer),
            withdraw=unsent.withdraw,
        )

    def refused(self, ctx: PortalContext, batch: ClaimedBatch, answer, *, at: datetime) -> DeliveryOutcome:
        left = dissolve_batch(ctx.db, batch, answer.reason or FAILED, now=at, request_answer=_answer_text(answer))
        if left:
            _publish(ctx, left, at)
        return DeliveryOutcome(SETTLED, "batch_dissolved")

    def release(self, ctx: PortalContext, batch: ClaimedBatch, release: Release, *, at: datetime) -> bool:
        return release_batch(
            ctx.db,
            batch,
            release.delay,
            release.reason,
            release.unknown,
            now=at,
            counts_as_attempt=not release.given_back,
            request_answer=release.answer and _answer_text(release.answer),
            withdraw=release.withdraw,
        )


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
