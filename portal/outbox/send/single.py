"""One email sent alone to POST /emails: the attempt path's way for a row that rides in no batch
(attempt.py says when each step happens; this module says how it is written for one row).

Its first attempt is rendered before the claim, and the claim freezes it in its own write
(freeze.claim_and_freeze); a row an earlier attempt froze is replayed. Its request is its row's:
the row's stored key, the first attempt's time as the start of the provider's window.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime

from portal.outbox.ground import metrics
from portal.outbox.ground.families import Family
from portal.outbox.ground.handles import PortalContext
from portal.outbox.ground.rendering import RenderedEmail
from portal.outbox.ground.retry import family_max_attempts
from portal.outbox.ground.rows import mark_retry, mark_sent, seconds_until_due, settle_unsent
from portal.outbox.ground.statuses import (
    CANCELLED,
    CLAIM_LOST,
    FAILED,
    RECIPIENT_SUPPRESSED,
    SUPPRESSED,
    UNKNOWN_OUTCOME,
)
from portal.outbox.send.attempt import SETTLED, DeliveryOutcome, Release, Unsent
from portal.outbox.send.claims import ClaimedRow, recheck_after_wait
from portal.outbox.send.freeze import claim_and_freeze, freeze_or_replay, payload_of, replay_frozen


@dataclass(frozen=True)
class HeldRow:
    """A claimed row as the attempt path holds it, with the message it will send once known."""

    row: ClaimedRow
    message: RenderedEmail | None = None
    render_error: Exception | None = None

    @property
    def attempt(self) -> int:
        return self.row.attempt_count

    @property
    def outcome_unknown(self) -> bool:
        return self.row.outcome_unknown

    @property
    def window_start(self) -> str | None:
        return self.row.first_attempt_at

    @property
    def carrier(self) -> None:
        return None


@dataclass(frozen=True)
class OneEmail:
    outbox_id: str
    # The row's stored input when a claim now would be its first attempt (freeze.FIRST_ATTEMPT_INPUT,
    # read with the consumer's routing), else None: nothing to render before the claim.
    first_input: str | None = None

    def claim(self, ctx: PortalContext, family: Family, *, now: datetime) -> HeldRow | None:
        settings = ctx.settings
        payload, render_error = self._first_attempt_payload(ctx, family, now)
        row, message = claim_and_freeze(
            ctx.db,
            self.outbox_id,
            payload,
            claim_seconds=settings.outbox_claim_seconds,
            republish_after_seconds=settings.outbox_republish_after_seconds,
            max_attempts=family_max_attempts(family, settings),
            now=now,
        )
        return None if row is None else HeldRow(row, message, render_error)

    def _first_attempt_payload(self, ctx: PortalContext, family: Family, now: datetime):
        """A first attempt is rendered before the claim, so its payload is frozen in the claim's own
        transaction. A row an earlier attempt froze is never rendered: its payload is replayed.

        Returns (payload, render error); a render error still lets the claim count this attempt."""
        if self.first_input is None:
            return None, None
        try:
            rendered = family.render(json.loads(self.first_input), ctx.settings, now=now)
            return payload_of(self.outbox_id, rendered, now=now), None
        except Exception as error:
            return None, error

    def seconds_until_due(self, ctx: PortalContext, *, now: datetime) -> float | None:
        return seconds_until_due(ctx.db, self.outbox_id, now=now)

    def left_out(self, ctx: PortalContext, held: HeldRow, *, now: datetime) -> DeliveryOutcome | None:
        """A row suppressed, or cancelled while an earlier delivery held it, is never sent now (if
        that one may have sent it, a person decides)."""
        row = held.row
        if row.suppressed:
            return self._stop(ctx, held, SUPPRESSED, RECIPIENT_SUPPRESSED, now)
        if row.cancel_reason is not None:
            return self._stop(ctx, held, CANCELLED, row.cancel_reason, now)
        return None

    def _stop(self, ctx: PortalContext, held: HeldRow, status: str, reason: str, at: datetime) -> DeliveryOutcome:
        settle_unsent(ctx.db, held.row.id, held.attempt, status, reason, now=at)
        return DeliveryOutcome(SETTLED, status if not held.outcome_unknown else UNKNOWN_OUTCOME)

    def prepare(self, ctx: PortalContext, held: HeldRow, family: Family, *, now: datetime) -> HeldRow | None:
        """The message of a claimed row the claim did not freeze: an earlier attempt's, replayed, or
        one rendered and frozen now; None when the row settled elsewhere meanwhile."""
        if held.message is not None:
            return held
        row = held.row
        if row.first_attempt_at is not None:
            message = replay_frozen(ctx.db, row.id)
            if message is not None:
                return replace(held, message=message)
        if held.render_error is not None:
            raise held.render_error
        # A first attempt the read before the claim did not see as one (it became claimable in
        # between): render and freeze now, after the claim.
        rendered = family.render(json.loads(row.template_input), ctx.settings, now=now)
        message = freeze_or_replay(ctx.db, row.id, rendered, now=now)
        return None if message is None else replace(held, message=message)

    def seal(self, ctx: PortalContext, held: HeldRow, *, now: datetime, refused=None) -> HeldRow:
        """Nothing to seal: a row's first attempt was stamped by its claim or its freeze."""
        return held

    def after_wait(self, ctx: PortalContext, held: HeldRow, *, now: datetime):
        found = recheck_after_wait(ctx.db, held.row, now=now)
        if found is None:
            return None
        if found.status == CLAIM_LOST:
            return CLAIM_LOST
        return self._stop(ctx, held, found.status, found.reason, now)

    def call(self, ctx: PortalContext, held: HeldRow, family: Family):
        row = held.row
        return ctx.provider.send(
            held.message, to=row.recipient, idempotency_key=row.provider_key, family=family.name, outbox_id=row.id
        )

    def sent(self, ctx: PortalContext, held: HeldRow, family: Family, answer, *, at: datetime) -> None:
        mark_sent(ctx.db, held.row.id, answer.message_id, now=at)
        metrics.email_accepted(family.name, held.row.created_at)

    def unsent(self, ctx: PortalContext, held: HeldRow, unsent: Unsent, *, at: datetime) -> None:
        settle_unsent(ctx.db, held.row.id, held.attempt, unsent.status, unsent.reason, now=at)

    def refused(self, ctx: PortalContext, held: HeldRow, answer, *, at: datetime) -> DeliveryOutcome:
        settle_unsent(ctx.db, held.row.id, held.attempt, FAILED, answer.reason, now=at)
        return DeliveryOutcome(SETTLED, FAILED)

    def release(self, ctx: PortalContext, held: HeldRow, release: Release, *, at: datetime) -> bool:
        return mark_retry(
            ctx.db,
            held.row.id,
            held.attempt,
            release.delay,
            release.reason,
            outcome_unknown=release.unknown,
            now=at,
            counts_as_attempt=not release.given_back,
        )
