"""A claimed batch's list before and at its seal (batch/claim.py says the facts every statement keeps):
members that cannot ride leave, the seal records the request about to be made, and what a wait for
a slot changed is read before the request (the claim lost, a member asked to stop)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from portal.core import clock
from portal.core.db import Database
from portal.core.driver import Statement, Steps
from portal.outbox.ground.batch_rows import (
    LOG_REQUEST_IF_SEALED,
    RECOMPOSE,
    SEAL,
    SETTLE_BATCH_IF_DONE,
    UNSEAL_IF_NOTHING_TAKEN,
    answer_steps,
    close_request,
)
from portal.outbox.ground.rows import LET_GO, RENUMBER, STAMP_FIRST_ATTEMPT_IF_LOGGED, SUPPRESSED_RECIPIENT
from portal.outbox.ground.statuses import UNSETTLED, sql_list
from portal.outbox.send.batch.claim import (
    batch_reads,
    frozen_after_storing,
    leaver_steps,
    read_steps,
    run_in,
    sealed_leaver_steps,
)
from portal.outbox.send.batch.held import ClaimedBatch, claimed_from, if_still_ours
from portal.outbox.send.claims import CLAIM_LOST
from portal.outbox.send.freeze import freeze_steps

# --- members that cannot ride -----------------------------------------------------------------


def let_members_go(
    db: Database, batch: ClaimedBatch, outbox_ids: list[str], reason: str, *, now: datetime
) -> list[str]:
    """Before the seal: these members go on alone (a payload a batch cannot carry, such as an
    attachment, or one that would not render); due at once, under their own keys. Returns the IDs
    that left; the caller publishes them."""
    if not outbox_ids:
        return []
    params = {"batch": batch.id, "attempt": batch.attempt_count, "reason": reason, "now": clock.iso(now)}
    left = []
    with db.write() as conn:
        for outbox_id in outbox_ids:
            if LET_GO(conn, {**params, "id": outbox_id}).rowcount == 1:
                left.append(outbox_id)
        if left:
            RENUMBER(conn, params)
            RECOMPOSE(conn, params)
            SETTLE_BATCH_IF_DONE(conn, params)
    return left


# --- the seal, just before a request -------------------------------------------------------------


def seal_batch_request(
    db: Database,
    batch: ClaimedBatch,
    *,
    now: datetime,
    previous_answer: str | None = None,
    payloads: Sequence[dict] = (),
) -> ClaimedBatch | None:
    """Record, in one write, that a request of this batch is about to be made; returns the batch as
    it will be sent, or None when it must not be (our claim was lost, or no member is left).
    `previous_answer`: what the provider said to this claim's previous request, a 429 (the only
    answer a claim tries again after): the list is open again if nothing of it may have been taken.
    `payloads`: first-attempt payloads of members (freeze.payload_of), stored after the leavers
    left and before the stamp, each only if none is stored yet (the first frozen payload wins);
    the batch read back holds what is stored.

    An unsealed batch lets its leavers go first. The slot for the request is taken after the seal,
    so that the request reaches the provider right after its slot (a seal waiting for the write lock
    between the two let a request reach the provider's window late, with a 429 for it)."""
    values = {"batch": batch.id, "attempt": batch.attempt_count, "token": batch.claim_token, "now": clock.iso(now)}
    steps = Steps().extend(answer_steps(values, previous_answer))
    if previous_answer is not None:
        steps.extend([(UNSEAL_IF_NOTHING_TAKEN, values)])
    if batch.sealed_at is None or previous_answer is not None:
        steps.extend(leaver_steps(values))
    for statement, stored_values in freeze_steps(payloads):
        steps.add("froze", statement, stored_values)
    steps.add("sealed", SEAL, values)
    steps.extend([(LOG_REQUEST_IF_SEALED, values), (STAMP_FIRST_ATTEMPT_IF_LOGGED, values)])
    written, (batch_row, members) = db.write_steps_then_read(steps, batch_reads(values))
    if written["sealed"].rowcount != 1:
        return None
    stored = written["froze"].rowcount if "froze" in written else 0
    frozen = frozen_after_storing(db, values, payloads, stored, batch.frozen)
    return if_still_ours(claimed_from(batch_row, members, frozen), batch.claim_token)


# After a wait for a slot: is the claim still this delivery's, and must a member no longer be sent?
_AFTER_WAIT = Statement(
    f"""
    SELECT NOT EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.attempt_count = :attempt
                       AND b.settled_at IS NULL AND b.claim_expires_at > :now) AS lost,
           EXISTS (SELECT 1 FROM email_outbox
                   WHERE batch_id = :batch AND provider_message_id IS NULL AND status IN {sql_list(UNSETTLED)}
                     AND (cancel_requested_at IS NOT NULL OR {SUPPRESSED_RECIPIENT})) AS asked
    """
)


def recheck_after_wait(db: Database, batch: ClaimedBatch, *, now: datetime) -> ClaimedBatch | str | None:
    """After a wait for a slot, before the sealed request is made, what the wait changed: CLAIM_LOST
    when the claim is no longer this delivery's (it expired, or was taken over); the batch as it is
    to be sealed again when a member was asked to stop or suppressed meanwhile; None when the
    request stands.

    The sealed request is taken back, and the member leaves: while no request of the list may have
    been taken, the list is open again (a new list under a new key at its next seal); otherwise it
    settles as a single email would and the rest keep the key (batch.claim.sealed_leaver_steps)."""
    params = {"batch": batch.id, "attempt": batch.attempt_count, "token": batch.claim_token, "now": clock.iso(now)}
    (found,) = db.read_steps([(_AFTER_WAIT, params)])
    lost, asked = found.first()
    if lost:
        return CLAIM_LOST
    if not asked:
        return None
    steps = leaver_steps(params) if not batch.outcome_unknown else sealed_leaver_steps(params)
    with db.write() as conn:
        close_request(conn, params, None, withdraw=True)
        run_in(conn, steps)
        batch_row, members, frozen = run_in(conn, read_steps(params))
        reopened = if_still_ours(claimed_from(batch_row, members, frozen.mappings().all()), batch.claim_token)
    return reopened if reopened is not None else CLAIM_LOST
