"""The statement book of email_outbox: every statement that changes a row, here and nowhere else
(a test holds it), each one guarded, with the rule it keeps; and the functions for the changes of
one row that several parts of the engine make (publication, a single email's settles, a cancel,
a receipt).

Eligibility and change are always tested in the same statement: a SELECT first could show two
deliveries the same waiting row and reserve it for neither. The conditions the statements share
come first, then the statements in the order of an email's life: written, published, claimed,
left out, settled, cancelled, moved by a receipt, acted on by an operator, erased. The table as a
reader sees it is in migrations/schema.sql. Each statement takes `now` from its caller (the job,
pass or request it belongs to), so the comparisons with the row's times are the caller's moment,
not the wall clock's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database, json_array
from portal.core.driver import Statement
from portal.outbox.ground.statuses import (
    CANCELLED,
    CONFIRMED_BY_OPERATOR,
    DEAD_LETTER,
    DELIVERY_EXHAUSTED,
    ENQUEUED,
    FAILED,
    OUTBOX_ID_UNCLAIMED,
    OUTCOME_UNKNOWN,
    PENDING,
    PROCESSING,
    RECEIPT_RANK,
    RECEIPT_STATUSES,
    RECIPIENT_SUPPRESSED,
    RETRY,
    SENDING_PAUSED,
    SENT,
    SENT_AGAIN,
    SETTLED,
    SUPPRESSED,
    UNKNOWN_OUTCOME,
    UNSETTLED,
    WAITING,
    among_named,
    sql_list,
)

# --- conditions the statements share -----------------------------------------------------------

# Which rows a delivery may claim: waiting and due, or in flight under an expired claim; never one
# holding a message ID. Shared with the read before the claim (freeze.py), so it asks the same.
CLAIMABLE = f"""
    provider_message_id IS NULL
    AND ((status IN {sql_list(WAITING)} AND (next_attempt_at IS NULL OR next_attempt_at <= :now))
         OR (status = '{PROCESSING}' AND (claim_expires_at IS NULL OR claim_expires_at <= :now)))
"""

# A row riding in a batch is sent with it (send/batch.py), never alone: the batch may be sealed, and
# the row's email may already have gone out under the batch's key.
NOT_IN_OPEN_BATCH = """(email_outbox.batch_id IS NULL OR EXISTS (
    SELECT 1 FROM email_batches b WHERE b.id = email_outbox.batch_id AND b.settled_at IS NOT NULL))"""

# The takeover rule, for a row and for a batch's members alike: a row in flight under an expired
# claim, whose first request may have been made, may have gone out; SET expressions read the row as
# it was. The claim itself moves the row to this attempt.
TAKE_CLAIM = f"""
    outcome_unknown = CASE WHEN status = '{PROCESSING}' AND first_attempt_at IS NOT NULL
                           THEN 1 ELSE outcome_unknown END,
    status = '{PROCESSING}',
    attempt_count = attempt_count + 1,
    claim_expires_at = :claim_expires_at,
    next_attempt_at = NULL,
    relay_since = :relay_since,
    updated_at = :now
"""

SUPPRESSED_RECIPIENT = "EXISTS (SELECT 1 FROM email_suppressions s WHERE s.email = recipient)"

# The batch is still this delivery's: its claim's number has not moved on (a takeover raises it).
OWN_CLAIM = "EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.attempt_count = :attempt)"

CLAIMED_BY_US = "EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.claim_token = :token)"

UNSEALED_AND_OURS = (
    "EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.claim_token = :token AND b.sealed_at IS NULL)"
)

RENUMBER_SQL = """
    UPDATE email_outbox
    SET batch_position = (SELECT COUNT(*) FROM email_outbox o WHERE o.batch_id = :batch
                          AND o.batch_position < email_outbox.batch_position)
    WHERE batch_id = :batch
"""

# A sealed list may already have reached the provider, so it never changes for a member that may
# still be sent. A member that must no longer be sent (asked to stop, or suppressed) is never sent,
# and leaves: it settles as a single email would (a dead letter with unknown_outcome when a request
# of the list may have gone, which is every sealed batch a claim takes over), its payload goes, and
# the rest keep their order and the key (a provider that saw the key refuses the shorter list with a
# 409, and they settle as unknown_outcome; one that did not sends it).
SEALED_AND_OURS = (
    "EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.claim_token = :token AND b.sealed_at IS NOT NULL)"
)

MUST_NOT_SEND = f"""batch_id = :batch AND status = '{PROCESSING}' AND provider_message_id IS NULL
      AND (cancel_requested_at IS NOT NULL OR {SUPPRESSED_RECIPIENT}) AND {SEALED_AND_OURS}"""


# The operator's actions: a failed email or a dead letter of which nothing can have been sent may be
# retried; one whose outcome is unknown, and whose content is still kept, may be sent again.
RETRYABLE = f"status IN {sql_list((FAILED, DEAD_LETTER))} AND provider_message_id IS NULL AND outcome_unknown = 0"
RESENDABLE = OUTCOME_UNKNOWN + " AND recipient != ''"
# A person's erasure: the rows about their subjects (their own records, by subject_ref).
ABOUT_SUBJECTS = "subject_ref IN (SELECT value FROM json_each(:about))"
# What the purge leaves of a settled row's address and input.
ERASED_RECIPIENT = ""
ERASED_INPUT = "{}"


# --- statements and the changes they make ----------------------------------------------------------

# relay_since of a row that waits for its first publication: always due.
ALWAYS_DUE = "0000-01-01T00:00:00.000000Z"


_RECORD_FIRST_ATTEMPT = Statement(
    "UPDATE email_outbox SET first_attempt_at = COALESCE(first_attempt_at, :now) WHERE id = :id"
)


def record_first_attempt(conn: sa.Connection, outbox_id: str, *, now: datetime) -> None:
    _RECORD_FIRST_ATTEMPT(conn, {"id": outbox_id, "now": clock.iso(now)})


_MARK_SENT = Statement(
    f"""
    UPDATE email_outbox
    SET status = '{SENT}', provider_message_id = :message_id, sent_at = :now,
        claim_expires_at = NULL, next_attempt_at = NULL, relay_since = NULL, last_error = NULL,
        outcome_unknown = 0, updated_at = :now
    WHERE id = :id AND provider_message_id IS NULL
    """
)
# A member of a sealed batch that has not settled keeps its payload even when it settles alone (a
# receipt): every retry of the batch rebuilds the whole list from its members' payloads.
_DELETE_FROZEN = Statement(
    """
    DELETE FROM email_frozen_payloads WHERE outbox_id = :id AND NOT EXISTS (
        SELECT 1 FROM email_outbox o JOIN email_batches b ON b.id = o.batch_id
        WHERE o.id = :id AND b.sealed_at IS NOT NULL AND b.settled_at IS NULL)
    """
)


def mark_sent(db: Database, outbox_id: str, provider_message_id: str, *, now: datetime) -> bool:
    """Record acceptance, only while no message ID is recorded; the frozen payload goes with it."""
    params = {"id": outbox_id, "message_id": provider_message_id, "now": clock.iso(now)}
    marked, _ = db.write_steps([(_MARK_SENT, params), (_DELETE_FROZEN, params)])
    return marked.rowcount == 1


# A row cancelled while this delivery held it (rows.cancel_unsent), released with nothing sent, is
# cancelled by the release itself; one that may have gone out waits for its next claim (attempt.py).
_STOPS_HERE = "(cancel_requested_at IS NOT NULL AND outcome_unknown = 0 AND :unknown = 0)"
_MARK_RETRY = Statement(
    f"""
    UPDATE email_outbox
    SET status = CASE WHEN {_STOPS_HERE} THEN '{CANCELLED}' ELSE '{RETRY}' END,
        next_attempt_at = CASE WHEN {_STOPS_HERE} THEN NULL ELSE :next_at END,
        relay_since = CASE WHEN {_STOPS_HERE} THEN NULL ELSE :next_at END,
        last_error = CASE WHEN {_STOPS_HERE} THEN cancel_reason ELSE :reason END,
        claim_expires_at = NULL, attempt_count = attempt_count - :given_back,
        outcome_unknown = MAX(outcome_unknown, :unknown), updated_at = :now
    WHERE id = :id AND provider_message_id IS NULL AND status = '{PROCESSING}' AND attempt_count = :attempt
    """
)


def mark_retry(
    db: Database,
    outbox_id: str,
    attempt: int,
    delay_seconds: float,
    reason: str,
    outcome_unknown: bool,
    *,
    now: datetime,
    counts_as_attempt: bool = True,
) -> bool:
    """Our claim ends; the row waits for its next attempt.

    Only the claim holder's state moves: if our claim expired and another delivery claimed the row
    (a higher attempt_count), this changes nothing. A release in which nothing was sent and nothing
    went wrong (a wait for a rate slot) gives the claim's attempt back: it never counts against the
    family's attempts. The next attempt is due `delay_seconds` after `now`.
    """
    params = {"id": outbox_id, "attempt": attempt, "reason": reason, "unknown": int(outcome_unknown)}
    params.update(next_at=clock.iso_in(delay_seconds, now), given_back=int(not counts_as_attempt), now=clock.iso(now))
    (released,) = db.write_steps([(_MARK_RETRY, params)])
    return released.rowcount == 1


# A row that may already have gone out never settles as unsent (failed, suppressed): it becomes a
# dead letter with unknown_outcome, for a person to decide. Whatever made it one (the row's flag, an
# attempt in flight, or the caller's reason: a 409 proves an earlier request reached the provider),
# the flag says so too: the console offers "Retry" only for rows without it.
_UNSENT_STATUS = f"""
    status = CASE WHEN {{unknown}} THEN '{DEAD_LETTER}' ELSE :status END,
    last_error = CASE WHEN {{unknown}} THEN '{UNKNOWN_OUTCOME}' ELSE :reason END,
    outcome_unknown = CASE WHEN {{unknown}} OR :reason = '{UNKNOWN_OUTCOME}' THEN 1 ELSE outcome_unknown END,
    claim_expires_at = NULL, next_attempt_at = NULL, relay_since = NULL, updated_at = :now
"""
# The claim holder settles its own attempt only: a stale holder (its claim expired and another
# delivery claimed the row, raising attempt_count) changes nothing.
_SETTLE_CLAIMED = Statement(
    f"""
    UPDATE email_outbox SET {_UNSENT_STATUS.format(unknown="outcome_unknown = 1")}
    WHERE id = :id AND provider_message_id IS NULL AND status = '{PROCESSING}' AND attempt_count = :attempt
    """
)
# Settling without a claim (the dead-letter queue, an ID no family recognises): never over a live
# claim, and a row whose attempt was in flight when its claim expired may have gone out.
_SETTLE_UNCLAIMED = Statement(
    f"""
    UPDATE email_outbox
    SET {_UNSENT_STATUS.format(unknown=f"outcome_unknown = 1 OR (status = '{PROCESSING}' AND first_attempt_at IS NOT NULL)")}
    WHERE id = :id AND provider_message_id IS NULL
      AND (status IN {sql_list(WAITING)}
           OR (status = '{PROCESSING}' AND (claim_expires_at IS NULL OR claim_expires_at <= :now)))
    """
)


def settle_unsent(
    db: Database, outbox_id: str, attempt: int, status: str, reason: str | None, *, now: datetime
) -> bool:
    """The claim holder's final state in which we hold no message ID (failed, suppressed, cancelled,
    dead letter); a row that may have gone out becomes a dead letter with unknown_outcome instead."""
    return _settle(db, _SETTLE_CLAIMED, outbox_id, status, reason, now, attempt=attempt)


def settle_unclaimed(db: Database, outbox_id: str, status: str, reason: str | None, *, now: datetime) -> bool:
    """A final state for a row nobody holds a live claim on at `now`; False (nothing changed) otherwise."""
    return _settle(db, _SETTLE_UNCLAIMED, outbox_id, status, reason, now)


def settle_exhausted(db: Database, outbox_id: str, *, now: datetime) -> bool:
    """The dead-letter queue's decision: out of attempts; unknown_outcome if one may have gone out."""
    return settle_unclaimed(db, outbox_id, DEAD_LETTER, DELIVERY_EXHAUSTED, now=now)


def mark_unclaimed_row_failed(db: Database, outbox_id: str, *, now: datetime) -> bool:
    """An envelope whose ID no family recognises: fail an eligible row so it does not look alive."""
    return settle_unclaimed(db, outbox_id, FAILED, OUTBOX_ID_UNCLAIMED, now=now)


def _settle(
    db: Database, statement: Statement, outbox_id: str, status: str, reason: str | None, now: datetime, **extra
) -> bool:
    assert status in (FAILED, SUPPRESSED, DEAD_LETTER, CANCELLED)
    with db.write() as conn:
        changed = statement(
            conn, {"id": outbox_id, "status": status, "reason": reason, "now": clock.iso(now), **extra}
        ).rowcount
        if changed:
            # Only the settling holder's: another delivery's payload is never pulled from under it.
            delete_frozen_payload(conn, outbox_id)
    return changed == 1


# A row of which no email can have gone out: every answer that might have sent one (a lost answer, a
# 5xx, a claim that expired after its first attempt) sets outcome_unknown, and nothing clears it. A
# row that only waited for a rate slot, met a 429 or failed before its call has outcome_unknown = 0,
# whatever its first_attempt_at says. A member of a sealed batch stays: its list is frozen (send/batch.py).
NOTHING_SENT = """
    provider_message_id IS NULL AND outcome_unknown = 0
    AND (batch_id IS NULL OR NOT EXISTS (SELECT 1 FROM email_batches b WHERE b.id = email_outbox.batch_id
                                         AND b.sealed_at IS NOT NULL AND b.settled_at IS NULL))
"""
# The rows the operator's "cancel" and cancel_unsent settle at once: waiting, nothing sent.
CANCELLABLE = f"status IN {sql_list(WAITING)} AND {NOTHING_SENT}"
_CANCEL_WAITING = sa.text(
    f"""
    UPDATE email_outbox
    SET status = '{CANCELLED}', last_error = :reason, claim_expires_at = NULL, next_attempt_at = NULL,
        relay_since = NULL, updated_at = :now
    WHERE {among_named(CANCELLABLE)}
    RETURNING id
    """
)
# In flight: the holder settles it before its provider call (attempt.py, send/batch.py), or the next
# claim does. Stamped once: the first reason stands. A member of a sealed batch is asked too, while
# no request of its list may have been taken (its outcome is not unknown): the batch takes the slot
# after the seal, and a member asked during that wait, or before a request the provider refused with
# a 429, leaves (batch.recheck_after_wait, seal_batch_request), as a single email would.
_ASK_TO_STOP = sa.text(
    f"""
    UPDATE email_outbox SET cancel_requested_at = :now, cancel_reason = :reason
    WHERE {among_named(f"status = '{PROCESSING}'")}
      AND provider_message_id IS NULL AND outcome_unknown = 0 AND cancel_requested_at IS NULL
    RETURNING id
    """
)


# Of the rows a cancel was given, those still unsettled after it. A row asked to stop (now or by an
# earlier cancel) is held by a delivery that checks before its request, but the request may already
# be on its way; any other may already be with the provider (an attempt with no answer, a sealed
# batch's frozen list). Either may still go out: the provider's answer decides.
_NOT_STOPPED = sa.text(
    f"""
    SELECT id, cancel_requested_at IS NOT NULL AND outcome_unknown = 0 AS asked FROM email_outbox
    WHERE {among_named(f"status IN {sql_list(UNSETTLED)}")}
    """
)


@dataclass(frozen=True)
class Cancellation:
    """What a cancel did to the rows it was given: codes for the edge to word, never words."""

    cancelled: tuple[str, ...]  # cancelled now: nothing went out and nothing will
    # Held by a delivery, asked to stop: stopped before its request, unless that is already on its way.
    asked_to_stop: tuple[str, ...]
    # Beyond a cancel's reach: it may already be with the provider (an attempt with no answer, a
    # member of a sealed batch), and follows the provider's answer.
    with_provider: tuple[str, ...]

    @property
    def may_still_go_out(self) -> int:
        """Emails the cancel could not promise to stop."""
        return len(self.asked_to_stop) + len(self.with_provider)


def _cancel(conn: sa.Connection, outbox_ids: list[str], reason: str, now: datetime) -> tuple[list[str], list[str]]:
    params = {"ids": json_array(outbox_ids), "reason": reason, "now": clock.iso(now)}
    cancelled = list(conn.execute(_CANCEL_WAITING, params).scalars())
    return cancelled, list(conn.execute(_ASK_TO_STOP, params).scalars())


def cancel_unsent(conn: sa.Connection, outbox_ids: list[str], reason: str, *, now: datetime) -> list[str]:
    """Cancel, inside the caller's transaction, every one of these rows of which no email can have
    gone out, whatever its status: a waiting row (pending, enqueued, retry after a rate-limit wait)
    is cancelled now; a row a delivery holds is asked to stop, and is stopped before its provider
    call. Returns the IDs of both, so a row asked to stop whose request was already on its way is
    among them: a caller that tells people what happened uses cancel_and_count. A row that may have
    gone out (or rides in a sealed batch) follows the provider's answer."""
    if not outbox_ids:
        return []
    cancelled, asked = _cancel(conn, outbox_ids, reason, now)
    return cancelled + asked


def cancel_and_count(conn: sa.Connection, outbox_ids: list[str], reason: str, *, now: datetime) -> Cancellation:
    """cancel_unsent, then which of these rows are stopped for certain (cancelled now) and which may
    still go out (asked to stop while a delivery holds them, or already with the provider). Rows
    already settled (sent, failed, cancelled before) are in none of the three."""
    if not outbox_ids:
        return Cancellation((), (), ())
    cancelled, _ = _cancel(conn, outbox_ids, reason, now)
    not_stopped = conn.execute(_NOT_STOPPED, {"ids": json_array(outbox_ids)}).all()
    return Cancellation(
        cancelled=tuple(cancelled),
        asked_to_stop=tuple(row.id for row in not_stopped if row.asked),
        with_provider=tuple(row.id for row in not_stopped if not row.asked),
    )


_NOT_YET_DUE = Statement(
    f"""
    SELECT next_attempt_at FROM email_outbox
    WHERE id = :id AND provider_message_id IS NULL AND status IN {sql_list(WAITING)} AND next_attempt_at > :now
    """
)


def seconds_until_due(db: Database, outbox_id: str, *, now: datetime) -> float | None:
    """For a row that could not be claimed at `now`: how long until its retry time, or None if it
    is not waiting for one (settled, claimed, missing)."""
    with db.read() as conn:
        due = _NOT_YET_DUE(conn, {"id": outbox_id, "now": clock.iso(now)}).scalar()
    return None if due is None else (clock.parse(due) - now).total_seconds()


_CREATED_AT = Statement("SELECT created_at FROM email_outbox WHERE id = :id")


def row_age_seconds(db: Database, outbox_id: str, *, now: datetime) -> float | None:
    """How long before `now` the row was committed; None if there is no such row."""
    with db.read() as conn:
        created_at = _CREATED_AT(conn, {"id": outbox_id}).scalar()
    return None if created_at is None else (now - clock.parse(created_at)).total_seconds()


def delete_frozen_payload(conn: sa.Connection, outbox_id: str) -> None:
    _DELETE_FROZEN(conn, {"id": outbox_id})


# A publication moves `pending` to `enqueued` and restarts the stale period of every row it
# published, so the relay republishes a lost message once per period, not on every pass. A failed
# one moves `enqueued` (a row its write wrote so, intents.py) back to `pending` with the reason, due
# for the relay's next pass: its message is not in the queue. A late write never turns `retry` into
# `enqueued` (the retry time stands) and never touches a live claim.
_STILL_PUBLISHABLE = (
    f"(status IN {sql_list(WAITING)}"
    f" OR (status = '{PROCESSING}' AND (claim_expires_at IS NULL OR claim_expires_at <= :now)))"
)
_RECORD_PUBLICATION = Statement(
    f"""
    UPDATE email_outbox
    SET status = CASE WHEN status IN ('{PENDING}', '{ENQUEUED}') THEN :status ELSE status END,
        last_error = CASE WHEN :error IS NULL AND last_error LIKE 'publish_failed%'
                          THEN NULL ELSE COALESCE(:error, last_error) END,
        enqueued_at = CASE WHEN :status = '{ENQUEUED}' AND status IN ('{PENDING}', '{ENQUEUED}')
                           THEN :now ELSE enqueued_at END,
        relay_since = CASE WHEN :status = '{ENQUEUED}' THEN :now
                           WHEN status = '{ENQUEUED}' THEN '{ALWAYS_DUE}' ELSE relay_since END,
        updated_at = :now
    WHERE provider_message_id IS NULL AND {among_named(_STILL_PUBLISHABLE)}
    """
)


def record_publication(db: Database, outbox_ids: list[str], status: str, error: str | None, *, now: datetime) -> None:
    """After a publish: `enqueued`, or `pending` with the reason. Only rows still waiting (or
    under an expired claim) change, so a late write never overwrites a claim or a settled row."""
    values = {"ids": json_array(outbox_ids), "status": status, "error": error, "now": clock.iso(now)}
    db.write_steps([(_RECORD_PUBLICATION, values)])


# --- changes a provider receipt makes ---------------------------------------------------------------
# Each runs in the receipt's own transaction (receipts.py), before the receipt is recorded as
# processed, and acts only while no processed receipt has this event ID, so a redelivered receipt
# whose first delivery committed changes nothing.
RECEIPT_UNPROCESSED = (
    "NOT EXISTS (SELECT 1 FROM email_receipts WHERE provider_event_id = :event_id AND processed_at IS NOT NULL)"
)
_RANK_OF_ROW = "CASE status " + " ".join(f"WHEN '{s}' THEN {r}" for s, r in RECEIPT_RANK.items()) + " ELSE 0 END"
# Newer (or equally new) and not lower-ranked: one guarded UPDATE decides.
_ADVANCE_ON_RECEIPT = Statement(
    f"""
    UPDATE email_outbox
    SET status = :status, last_event_at = :event_at, updated_at = :now
    WHERE provider_message_id = :email_id
      AND status IN {sql_list(RECEIPT_STATUSES)}
      AND (last_event_at IS NULL OR julianday(:event_at) >= julianday(last_event_at))
      AND :rank >= {_RANK_OF_ROW}
      AND {RECEIPT_UNPROCESSED}
    RETURNING id
    """
)


def advance_on_receipt(conn: sa.Connection, params: dict, status: str) -> str | None:
    """Move the row holding this message ID to the receipt's status; its ID, or None if nothing moved.

    `params` holds event_id, email_id, event_at and now.
    """
    return _ADVANCE_ON_RECEIPT(conn, {**params, "status": status, "rank": RECEIPT_RANK[status]}).scalar()


# Eligible: a row still waiting or in flight, or any dead letter: a receipt that proves the provider
# took the email outranks every reason a row became one (an unknown outcome, exhausted attempts).
# Never failed or suppressed, never one holding a message ID.
_SETTLE_FROM_RECEIPT_TAG = Statement(
    f"""
    UPDATE email_outbox
    SET provider_message_id = :email_id, status = :status, last_event_at = :event_at,
        sent_at = COALESCE(sent_at, :event_at), claim_expires_at = NULL, next_attempt_at = NULL,
        relay_since = NULL, last_error = NULL, outcome_unknown = 0, updated_at = :now
    WHERE id = :outbox_id AND provider_message_id IS NULL
      AND (status IN {sql_list(UNSETTLED)} OR status = '{DEAD_LETTER}')
      AND {RECEIPT_UNPROCESSED}
    """
)


def settle_from_receipt_tag(conn: sa.Connection, params: dict, outbox_id: str, status: str) -> bool:
    """Record the provider's message ID on a row that never got its answer (found by its outbox_id tag).

    The frozen payload goes with the settlement, as it does when the send path records acceptance;
    the row can no longer be claimed, so nothing will replay it.
    """
    settled = _SETTLE_FROM_RECEIPT_TAG(conn, {**params, "outbox_id": outbox_id, "status": status}).rowcount == 1
    if settled:
        delete_frozen_payload(conn, outbox_id)
    return settled


# Built once: these run for every email, in one transaction (on a libSQL server, one request:
# Database.write_steps). Two statements, not one UPDATE ... RETURNING: libSQL prepares every
# statement anew, and preparing the RETURNING clause cost more than the SELECT. SET expressions
# read the row as it was, so attempt_count + 1 is this attempt.
CLAIM = Statement(
    f"""
    UPDATE email_outbox
    SET first_attempt_at = CASE WHEN first_attempt_at IS NULL AND :first_attempt_at IS NOT NULL
                                     AND attempt_count + 1 <= :max_attempts AND NOT {SUPPRESSED_RECIPIENT}
                                     AND cancel_requested_at IS NULL
                                THEN :first_attempt_at ELSE first_attempt_at END,
        {TAKE_CLAIM}
    WHERE id = :id AND {CLAIMABLE} AND {NOT_IN_OPEN_BATCH}
    """
)


# The same rule as a row's claim (claims.TAKE_CLAIM): a member in flight under an expired claim whose
# first request was made (the seal stamped it) may have gone out.
CLAIM_MEMBERS = Statement(
    f"UPDATE email_outbox SET {TAKE_CLAIM} WHERE batch_id = :batch AND {CLAIMABLE} AND {CLAIMED_BY_US}"
)

# Before the seal only: members that may not be sent settle (suppressed) or were settled elsewhere
# (cancelled by a person, a campaign cancel), and every settled one leaves the list.
SETTLE_SUPPRESSED_MEMBERS = Statement(
    f"""
    UPDATE email_outbox
    SET status = '{SUPPRESSED}', last_error = '{RECIPIENT_SUPPRESSED}', claim_expires_at = NULL,
        next_attempt_at = NULL, relay_since = NULL, updated_at = :now
    WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)} AND provider_message_id IS NULL
      AND outcome_unknown = 0 AND {SUPPRESSED_RECIPIENT} AND {UNSEALED_AND_OURS}
    """
)

# Before the seal only: members cancelled while this batch was claimed (rows.cancel_unsent asked them
# to stop) are cancelled now, and leave with the rest.
CANCEL_ASKED_MEMBERS = Statement(
    f"""
    UPDATE email_outbox
    SET status = '{CANCELLED}', last_error = cancel_reason, claim_expires_at = NULL,
        next_attempt_at = NULL, relay_since = NULL, updated_at = :now
    WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)} AND provider_message_id IS NULL
      AND outcome_unknown = 0 AND cancel_requested_at IS NOT NULL AND {UNSEALED_AND_OURS}
    """
)

LEAVE = Statement(
    f"""
    UPDATE email_outbox SET batch_id = NULL, batch_position = NULL
    WHERE batch_id = :batch AND (status NOT IN {sql_list(UNSETTLED)} OR provider_message_id IS NOT NULL)
      AND {UNSEALED_AND_OURS}
    """
)


RENUMBER = Statement(RENUMBER_SQL)

# After LEAVE: only when a member left (changes() is LEAVE's), and the key's last part counts up
# only when members were renumbered (changes() is RENUMBER's: none when nobody is left).
RENUMBER_IF_LEFT = Statement(RENUMBER_SQL + " AND changes() > 0")


SEALED_LEAVE = Statement(
    f"""
    UPDATE email_outbox
    SET status = CASE WHEN outcome_unknown = 1 THEN '{DEAD_LETTER}'
                      WHEN cancel_requested_at IS NOT NULL THEN '{CANCELLED}' ELSE '{SUPPRESSED}' END,
        last_error = CASE WHEN outcome_unknown = 1 THEN '{UNKNOWN_OUTCOME}'
                          WHEN cancel_requested_at IS NOT NULL THEN cancel_reason ELSE '{RECIPIENT_SUPPRESSED}' END,
        batch_id = NULL, batch_position = NULL, claim_expires_at = NULL, next_attempt_at = NULL,
        relay_since = NULL, updated_at = :now
    WHERE {MUST_NOT_SEND}
    """
)

# Only after the request was logged (changes() is LOG_REQUEST_IF_SEALED's, which logs only after a seal).
STAMP_FIRST_ATTEMPT_IF_LOGGED = Statement(
    f"""
    UPDATE email_outbox SET first_attempt_at = COALESCE(first_attempt_at, :now), updated_at = :now
    WHERE batch_id = :batch AND status = '{PROCESSING}' AND provider_message_id IS NULL AND changes() = 1
    """
)

LET_GO = Statement(
    f"""
    UPDATE email_outbox
    SET batch_id = NULL, batch_position = NULL, status = '{RETRY}', next_attempt_at = :now,
        relay_since = :now, last_error = :reason, claim_expires_at = NULL, updated_at = :now
    WHERE id = :id AND batch_id = :batch AND status = '{PROCESSING}' AND provider_message_id IS NULL
      AND {OWN_CLAIM} AND NOT EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.sealed_at IS NOT NULL)
    """
)

# One statement for the whole list (the write lock is held for one, not a hundred): each member
# takes the ID at its position in the answer.
MARK_MEMBERS_SENT = Statement(
    f"""
    UPDATE email_outbox
    SET status = '{SENT}', provider_message_id = json_extract(:message_ids, '$[' || batch_position || ']'),
        sent_at = :now, claim_expires_at = NULL, next_attempt_at = NULL, relay_since = NULL,
        last_error = NULL, outcome_unknown = 0, updated_at = :now
    WHERE batch_id = :batch AND provider_message_id IS NULL AND batch_position < json_array_length(:message_ids)
    """
)

RELEASE_MEMBERS = Statement(
    f"""
    UPDATE email_outbox
    SET status = '{RETRY}', next_attempt_at = :next_at, relay_since = :next_at, last_error = :reason,
        claim_expires_at = NULL, attempt_count = attempt_count - :given_back,
        outcome_unknown = MAX(outcome_unknown, :unknown), updated_at = :now
    WHERE batch_id = :batch AND provider_message_id IS NULL AND status = '{PROCESSING}' AND {OWN_CLAIM}
    """
)

# The same rule as rows.py's settle: a member that may already have gone out becomes a dead letter
# with unknown_outcome, never failed.
SETTLE_MEMBERS_UNSENT = Statement(
    f"""
    UPDATE email_outbox
    SET status = CASE WHEN outcome_unknown = 1 THEN '{DEAD_LETTER}' ELSE :status END,
        last_error = CASE WHEN outcome_unknown = 1 THEN '{UNKNOWN_OUTCOME}' ELSE :reason END,
        outcome_unknown = CASE WHEN outcome_unknown = 1 OR :reason = '{UNKNOWN_OUTCOME}' THEN 1 ELSE 0 END,
        claim_expires_at = NULL, next_attempt_at = NULL, relay_since = NULL, updated_at = :now
    WHERE batch_id = :batch AND provider_message_id IS NULL AND status = '{PROCESSING}' AND {OWN_CLAIM}
    """
)

DISSOLVE_MEMBERS = Statement(
    f"""
    UPDATE email_outbox
    SET batch_id = NULL, batch_position = NULL, status = '{RETRY}', next_attempt_at = :now,
        relay_since = :now, last_error = :reason, claim_expires_at = NULL, updated_at = :now
    WHERE batch_id = :batch AND provider_message_id IS NULL AND status = '{PROCESSING}'
      AND outcome_unknown = 0 AND {OWN_CLAIM}
    RETURNING id
    """
)

UNSTAMP_FIRST_ATTEMPT = Statement(
    f"""
    UPDATE email_outbox SET first_attempt_at = NULL, updated_at = :now
    WHERE batch_id = :batch AND provider_message_id IS NULL AND outcome_unknown = 0
      AND NOT EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.sealed_at IS NOT NULL)
      AND status IN {sql_list(UNSETTLED)}
    """
)

OPERATOR_RETRY = sa.text(
    f"""
    UPDATE email_outbox
    SET status = '{PENDING}', attempt_count = 0, last_error = NULL, claim_expires_at = NULL,
        next_attempt_at = NULL, relay_since = '{ALWAYS_DUE}', updated_at = :now
    WHERE {among_named(RETRYABLE)}
    RETURNING id
    """
)

OPERATOR_CONFIRM_SENT = sa.text(
    f"""
    UPDATE email_outbox
    SET status = '{SENT}', provider_message_id = :message_id, sent_at = COALESCE(sent_at, :now),
        last_error = '{CONFIRMED_BY_OPERATOR}', outcome_unknown = 0, claim_expires_at = NULL,
        next_attempt_at = NULL, relay_since = NULL, updated_at = :now
    WHERE {among_named(OUTCOME_UNKNOWN)}
    RETURNING id
    """
)

MARK_SENT_AGAIN = sa.text(
    f"""
    UPDATE email_outbox SET last_error = '{SENT_AGAIN}', updated_at = :now
    WHERE {among_named(RESENDABLE)}
    RETURNING id
    """
)

ERASE_ROWS = Statement(
    """
    UPDATE email_outbox SET recipient = :pseudonym, template_input = '{}', last_error = NULL, updated_at = :now
    WHERE recipient = :address RETURNING id
    """
)

# Emails to others about the person (the sales inbox's copy of their demo request) keep their
# recipient and lose what the person wrote.
ERASE_ABOUT = Statement(
    f"UPDATE email_outbox SET template_input = '{{}}', updated_at = :now WHERE {ABOUT_SUBJECTS} RETURNING id"
)

# Emails to others that name an erased person in one field of their input (an invitation names its
# inviter) name a stand-in instead, in the email's own language (`stand_ins`: {language: text};
# rows from before languages are English); a stand-in already there (`kept`) stays.
FORGET_NAMED = Statement(
    f"""
    UPDATE email_outbox
    SET template_input = json_set(template_input, '$.' || :field,
            COALESCE(json_extract(:stand_ins, '$.' || COALESCE(json_extract(template_input, '$.language'), 'en')),
                     json_extract(:stand_ins, '$.en'))),
        updated_at = :now
    WHERE {ABOUT_SUBJECTS} AND json_type(template_input, '$.' || :field) = 'text'
      AND json_extract(template_input, '$.' || :field) NOT IN (SELECT value FROM json_each(:kept))
    RETURNING id
    """
)

ERASE_OUTBOX = Statement(
    f"""
    UPDATE email_outbox SET recipient = '{ERASED_RECIPIENT}', template_input = '{ERASED_INPUT}',
        shared_input_id = NULL
    WHERE status IN {sql_list(SETTLED)} AND updated_at < :cutoff AND recipient != '{ERASED_RECIPIENT}'
    """
)

# The provider's idempotency key is written with the row, once, and every attempt of every release
# reads it (claims.py): the row's random ID under the environment and the install. Not the domain's
# key: that is built from local IDs (invitation:1:send:1), which a database restored from a backup
# hands out again, so a new email would meet the key of one the lost rows sent.
INSERT_ROWS_FROM = """
    INSERT INTO email_outbox (id, family, recipient, idempotency_key, status, template,
        template_version, layout_version, template_input, environment, subject_ref,
        provider_key, shared_input_id, relay_since, enqueued_at, created_at, updated_at)
    SELECT r.value ->> '$.id', r.value ->> '$.family', r.value ->> '$.recipient', {key},
        r.value ->> '$.status', r.value ->> '$.template', r.value ->> '$.template_version',
        r.value ->> '$.layout_version', {data}, r.value ->> '$.environment', {subject_ref},
        (r.value ->> '$.environment') || ':' || (SELECT install_id FROM portal_install WHERE id = 1)
            || ':' || (r.value ->> '$.id'),
        r.value ->> '$.shared_input_id', r.value ->> '$.relay_since', r.value ->> '$.enqueued_at',
        r.value ->> '$.now', r.value ->> '$.now'
    FROM json_each(:rows) AS r {join}
    WHERE true
    ON CONFLICT (idempotency_key) DO NOTHING
    """

INSERT_ROWS = Statement(
    INSERT_ROWS_FROM.format(
        key="r.value ->> '$.key'", data="r.value ->> '$.data'", subject_ref="r.value ->> '$.subject_ref'", join=""
    )
)

# A group names its rows by ID. An ID with no row is no member (an area's write may name rows its
# own guards did not write: invitations.operations); the rows that are there join all together or
# not at all: a batch is written only if every one of them may still join (a publication reading
# before its write may find them composed meanwhile) and at least two are there, and they join
# only a batch written, at their places among the rows that are there (0, 1, 2...: the provider's
# answer is read by position, send/batch.py). Every group of a write in one statement each.
# The provider's key for a batch's first composition: unique across databases (the install ID) and
# environments (send/batch.py makes a new one whenever the list changes before its first request).
GROUP_MEMBERS = "json_each(g.value -> '$.ids') AS m JOIN email_outbox o ON o.id = m.value"

JOIN_BATCHES = Statement(
    f"""
    UPDATE email_outbox SET batch_id = joining_batch, batch_position = joining_position
    FROM (SELECT o.id AS joining_id, g.value ->> '$.batch' AS joining_batch,
                 ROW_NUMBER() OVER (PARTITION BY g.key ORDER BY m.key) - 1 AS joining_position
          FROM json_each(:groups) AS g, {GROUP_MEMBERS})
    WHERE email_outbox.id = joining_id AND batch_id IS NULL AND first_attempt_at IS NULL
      AND provider_message_id IS NULL AND +status IN {sql_list(WAITING)}  -- by the list: see among_named
      AND EXISTS (SELECT 1 FROM email_batches WHERE id = joining_batch)
    """
)


# --- rows an operator's pause parked (ground/pause.py) --------------------------------------------
# A parked row: given back by a delivery that met the pause, due only after pause.PARKED_SECONDS.
_PARKED = f"status = '{RETRY}' AND last_error = '{SENDING_PAUSED}'"
_HELD_BACK = "(:all_held = 1 OR family IN (SELECT value FROM json_each(:held)))"
# The parked rows no pause holds any longer, in the order they were written (on the console's
# index of status and creation).
PARKED_FREE = sa.text(
    f"SELECT id, family FROM email_outbox WHERE {_PARKED} AND NOT {_HELD_BACK} ORDER BY created_at, id"
)
# ...made due now and parked no longer, in the resume's own write: the resume publishes them next, and should that
# publication be lost, the relay finds them a stale period later.
UNPARK = sa.text(
    f"""
    UPDATE email_outbox SET next_attempt_at = :now, relay_since = :now, last_error = NULL, updated_at = :now
    WHERE {_PARKED} AND NOT {_HELD_BACK}
    """
)


def parked_values(held_families: list[str], all_held: bool, *, now: datetime) -> dict:
    """The values of PARKED_FREE and UNPARK while `held_families` (and all, if `all_held`) stay paused."""
    return {"held": json_array(held_families), "all_held": int(all_held), "now": clock.iso(now)}
