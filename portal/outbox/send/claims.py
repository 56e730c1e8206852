"""The claim: one delivery at a time owns an outbox row, until its claim expires.

Eligibility and change are tested in one guarded UPDATE (as everywhere in rows.py), then the
claimed row is read in the same transaction (CLAIM, then CLAIMED). A first attempt that arrives rendered has its first
attempt time set by that same UPDATE, so the claim, the record that the first provider request
follows, and its history event (a trigger) are one statement; freeze.py stores the payload next.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from portal.core import clock
from portal.core.db import Database
from portal.core.driver import DriverResult, Statement
from portal.core.settings import Settings
from portal.outbox.ground.rows import CLAIM, SUPPRESSED_RECIPIENT
from portal.outbox.ground.statuses import CANCELLED, CLAIM_LOST, PROCESSING, RECIPIENT_SUPPRESSED, SUPPRESSED
from portal.outbox.write.intents import TEMPLATE_INPUT

DEFAULT_REPUBLISH_AFTER = Settings.outbox_republish_after_seconds


@dataclass(frozen=True)
class ClaimedRow:
    id: str
    family: str
    recipient: str
    idempotency_key: str
    attempt_count: int
    template_input: str
    environment: str
    outcome_unknown: bool
    first_attempt_at: str | None
    suppressed: bool  # the recipient is on the suppression list at claim time
    provider_key: str  # the idempotency key, stored with the row (intents.py) and never recomputed
    cancel_reason: str | None  # cancelled while an earlier delivery held it (rows.cancel_unsent): never sent
    created_at: str | None = None  # the commit of the row: commit-to-accepted latency (metrics.py)


CLAIMED = Statement(
    f"""
    SELECT id, family, recipient, idempotency_key, attempt_count, {TEMPLATE_INPUT} AS template_input,
           environment, outcome_unknown, first_attempt_at, created_at, provider_key,
           CASE WHEN cancel_requested_at IS NOT NULL THEN cancel_reason END AS cancel_reason,
           {SUPPRESSED_RECIPIENT} AS suppressed
    FROM email_outbox WHERE id = :id
    """
)


def claim_outbox_row(
    db: Database,
    outbox_id: str,
    claim_seconds: int,
    republish_after_seconds: int = DEFAULT_REPUBLISH_AFTER,
    *,
    now: datetime,
) -> ClaimedRow | None:
    """Admit one delivery: the row is ours until its claim expires, or None if it is not eligible.

    Only a due row is eligible: a row waiting for its retry time (a 429's retry-after, a growing
    delay) is not claimable before it, whoever delivers its message.

    A row that is reclaimed after an expired claim, past its first provider request, may have been
    sent by the delivery that died: its outcome is unknown from then on. The suppression list is
    read in the same statement, so the check costs no extra round trip. `now` decides whether a
    retry time has come or an earlier claim has expired, and starts this claim.
    """
    values = claim_values(outbox_id, claim_seconds, republish_after_seconds, now=now)
    claim, claimed = db.write_steps([(CLAIM, values), (CLAIMED, values)])
    return claimed_row(claim, claimed)


def claim_values(
    outbox_id: str,
    claim_seconds: int,
    republish_after_seconds: int = DEFAULT_REPUBLISH_AFTER,
    *,
    now: datetime,
    first_attempt_at: str | None = None,
    max_attempts: int = 0,
) -> dict:
    """What CLAIM and CLAIMED bind. With `first_attempt_at`, a row no attempt has reached, that is
    not suppressed and has attempts left (at most `max_attempts`), gets that first attempt time in
    the claim itself (freeze.claim_and_freeze)."""
    return {
        "id": outbox_id,
        "now": clock.iso(now),
        "claim_expires_at": clock.iso_in(claim_seconds, now),
        # The relay finds the row again once its claim has expired.
        "relay_since": clock.iso_in(claim_seconds - republish_after_seconds, now),
        "first_attempt_at": first_attempt_at,
        "max_attempts": max_attempts,
    }


@dataclass(frozen=True)
class AfterWait:
    """Why a delivery that waited must not make its request: its claim is gone (CLAIM_LOST), or the
    row is to settle as `status` (cancelled, suppressed) with `reason`."""

    status: str
    reason: str | None = None


_AFTER_WAIT = Statement(
    f"""
    SELECT CASE WHEN status != '{PROCESSING}' OR attempt_count != :attempt OR provider_message_id IS NOT NULL
                     OR claim_expires_at IS NULL OR claim_expires_at <= :now THEN '{CLAIM_LOST}'
                WHEN cancel_requested_at IS NOT NULL THEN '{CANCELLED}'
                WHEN {SUPPRESSED_RECIPIENT} THEN '{SUPPRESSED}' END AS status,
           CASE WHEN cancel_requested_at IS NOT NULL THEN cancel_reason ELSE '{RECIPIENT_SUPPRESSED}' END AS reason
    FROM email_outbox WHERE id = :id
    """
)


def recheck_after_wait(db: Database, row: ClaimedRow, *, now: datetime) -> AfterWait | None:
    """After a wait for a slot, before the request: None while the claim is still this delivery's
    and the row may still be sent. What the claim read may have changed during the wait: the claim
    expired and another delivery may have sent the row (and the provider's window may have passed,
    so a resend would be a second email), a person cancelled it, or its address was suppressed."""
    with db.read() as conn:
        found = _AFTER_WAIT(conn, {"id": row.id, "attempt": row.attempt_count, "now": clock.iso(now)}).first()
    if found is None:
        return AfterWait(CLAIM_LOST)
    return (
        None if found.status is None else AfterWait(found.status, found.reason if found.status != CLAIM_LOST else None)
    )


def claimed_row(claim: DriverResult, claimed: DriverResult) -> ClaimedRow | None:
    """The claimed row, from the results of CLAIM and CLAIMED run in one transaction; None if
    CLAIM took nothing."""
    if claim.rowcount != 1:
        return None
    row = claimed.mappings().first()
    return ClaimedRow(**{**row, "outcome_unknown": bool(row["outcome_unknown"]), "suppressed": bool(row["suppressed"])})
