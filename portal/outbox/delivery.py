"""One delivery of one outbox row: claim, check, render, freeze, send, settle."""

from __future__ import annotations

import json
from dataclasses import dataclass

from portal.outbox import clock
from portal.outbox import provider as answers
from portal.outbox.families import Family
from portal.outbox.freeze import freeze_or_replay
from portal.outbox.handles import EmailHandles
from portal.outbox.retry import family_max_attempts, family_retry_delay
from portal.outbox.rows import claim_outbox_row, mark_retry, mark_sent, settle_unsent
from portal.outbox.statuses import DEAD_LETTER, DELIVERY_EXHAUSTED, FAILED, SUPPRESSED, UNKNOWN_OUTCOME

SKIPPED, SETTLED, RETRYING = "skipped", "settled", "retry"


@dataclass(frozen=True)
class DeliveryOutcome:
    kind: str
    detail: str
    delay_seconds: float | None = None
    attempt: int = 0


def deliver_outbox_row(ctx: EmailHandles, outbox_id: str, family: Family) -> DeliveryOutcome:
    settings, db = ctx.settings, ctx.db
    row = claim_outbox_row(db, outbox_id, settings.outbox_claim_seconds)
    if row is None:
        # Settled, in flight under a live claim, or missing: a duplicate delivery does nothing.
        return DeliveryOutcome(SKIPPED, "not_claimable")
    if row.attempt_count > family_max_attempts(family, settings):
        settle_unsent(db, row.id, DEAD_LETTER, DELIVERY_EXHAUSTED)
        return DeliveryOutcome(SETTLED, DELIVERY_EXHAUSTED)
    if row.suppressed:
        settled_as = SUPPRESSED if not row.outcome_unknown else UNKNOWN_OUTCOME
        settle_unsent(db, row.id, SUPPRESSED, "recipient_suppressed")
        return DeliveryOutcome(SETTLED, settled_as)
    if row.outcome_unknown and _provider_window_passed(row.first_attempt_at, settings):
        # The provider has forgotten the key: a resend could be a second email. A person decides.
        settle_unsent(db, row.id, DEAD_LETTER, UNKNOWN_OUTCOME)
        return DeliveryOutcome(SETTLED, UNKNOWN_OUTCOME)

    rendered = family.render(json.loads(row.template_input), settings)
    message = freeze_or_replay(db, row.id, rendered)
    if message is None:
        return DeliveryOutcome(SKIPPED, "settled_elsewhere")
    answer = ctx.provider.send(
        message, to=row.recipient, idempotency_key=row.idempotency_key, family=family.name, outbox_id=row.id
    )

    if answer.kind == answers.ACCEPTED:
        mark_sent(db, row.id, answer.message_id)
        return DeliveryOutcome(SETTLED, "sent")
    if answer.kind == answers.UNKNOWN_OUTCOME or (answer.kind == answers.REJECTED and row.outcome_unknown):
        # A conflict proves an earlier request reached the provider, not whether it sent the email.
        settle_unsent(db, row.id, DEAD_LETTER, UNKNOWN_OUTCOME)
        return DeliveryOutcome(SETTLED, UNKNOWN_OUTCOME)
    if answer.kind == answers.REJECTED:
        settle_unsent(db, row.id, FAILED, answer.reason)
        return DeliveryOutcome(SETTLED, "failed")
    delay = family_retry_delay(family, row.attempt_count, settings, answer.retry_after)
    mark_retry(db, row.id, row.attempt_count, delay, answer.reason or "retry", outcome_unknown=answer.ambiguous)
    return DeliveryOutcome(RETRYING, answer.reason or "retry", delay_seconds=delay, attempt=row.attempt_count)


def _provider_window_passed(first_attempt_at: str | None, settings) -> bool:
    if first_attempt_at is None:
        return False
    age = (clock.utcnow() - clock.parse(first_attempt_at)).total_seconds()
    return age >= settings.provider_idempotency_window_seconds
