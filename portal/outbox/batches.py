"""Batches: up to OUTBOX_BATCH_SIZE rows of one family sent in one provider request under one key.

Resend's POST /emails/batch takes up to 100 emails under one idempotency key and refuses a second
body under a key it has seen. So a batch is decided in the database before anything is sent, and
every statement here keeps three facts true:

- **The composition is written first.** Publication groups waiting rows that no attempt has reached
  into batches (`messages_to_publish`): the batch row, its key and each member's position commit
  before the batch's message reaches the queue.
- **The seal freezes it.** Just before a request, `seal_batch_request` stamps the batch (and each
  member's first attempt) in one write. From then on no member leaves and no position changes, so
  every retry builds the same list from the members' frozen payloads, in position order, under the
  same key: the provider's 409 for a changed body cannot happen.
- **Before the seal, a row that may no longer be sent leaves.** A member cancelled, suppressed or
  asked to stop (a deactivation while the batch is claimed) leaves at the claim or at the seal; the
  key's last part counts up, since the list is no longer the one composed. Nothing was sent under
  any of the batch's keys yet, so nothing can go twice.

A batch has its own claim (one delivery at a time, as for a row); its members are claimed with it,
and every settle carries the batch claim's number. A batch whose claim expired after its seal may
have been sent by the delivery that died: its members' outcome is unknown from then on, exactly as
for a row (the claim's CASE below is the same rule).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database, Statement, json_array
from portal.outbox.claims import CLAIMABLE
from portal.outbox.intents import TEMPLATE_INPUT
from portal.outbox.statuses import (
    CANCELLED,
    DEAD_LETTER,
    FAILED,
    PROCESSING,
    RETRY,
    SENT,
    SUPPRESSED,
    UNKNOWN_OUTCOME,
    UNSETTLED,
    WAITING,
    sql_list,
)

BATCH_ID_PREFIX = "bat"
# Resend's own ceiling for one POST /emails/batch.
PROVIDER_BATCH_LIMIT = 100
SUPPRESSED_REASON = "recipient_suppressed"
_SUPPRESSED = "EXISTS (SELECT 1 FROM email_suppressions s WHERE s.email = recipient)"
_OURS = "EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.attempt_count = :attempt)"


def provider_key_of(environment: str, install_id: str, batch_id: str, composition: int) -> str:
    """The key the provider sees for one composition of a batch: unique across databases (the
    install ID) and environments, and new whenever the list changed before its first request."""
    return f"{environment}:{install_id}:{batch_id}:{composition}"


# --- composition, at publication ---------------------------------------------------------------

# Rows that may join a batch: waiting, never attempted, in none yet. Their creation order is the
# batch's order (rowid: one page of the table, and the order intents were written in).
_JOINABLE = sa.text(
    f"""
    SELECT id, family, environment, batch_id FROM email_outbox
    WHERE id IN (SELECT value FROM json_each(:ids)) AND provider_message_id IS NULL
      AND status IN {sql_list(WAITING)}
    ORDER BY rowid
    """
)
_INSERT_BATCH = Statement(
    """
    INSERT INTO email_batches (id, family, provider_key, composition, created_at, updated_at)
    VALUES (:batch, :family, :provider_key, 1, :now, :now)
    """
)
_JOIN = Statement(
    f"""
    UPDATE email_outbox SET batch_id = :batch, batch_position = :position
    WHERE id = :id AND batch_id IS NULL AND first_attempt_at IS NULL AND provider_message_id IS NULL
      AND status IN {sql_list(WAITING)}
    """
)
_INSTALL_ID = Statement("SELECT install_id FROM portal_install WHERE id = 1")


def messages_to_publish(db: Database, outbox_ids: list[str], batchable: set[str], size: int, *, now: datetime):
    """The IDs whose messages carry these rows: rows of a `batchable` family that no attempt has
    reached are grouped, `size` at a time in creation order, into batches written now; each batch
    is carried by one message, its first member's ID. Every other row is carried by its own.

    A group of one stays a single email, so a lone invitation costs no batch at all.
    """
    size = min(size, PROVIDER_BATCH_LIMIT)
    if size < 2 or len(outbox_ids) < 2:
        return list(outbox_ids)
    carried: dict[str, str] = {}  # row ID -> the ID of the message that carries it
    with db.write() as conn:
        rows = conn.execute(_JOINABLE, {"ids": json_array(outbox_ids)}).mappings().all()
        install_id = None
        groups: dict[tuple[str, str], list[str]] = {}
        for row in rows:
            if row["batch_id"] is not None:
                carried[row["id"]] = carried.setdefault(row["batch_id"], row["id"])
            elif row["family"] in batchable:
                groups.setdefault((row["family"], row["environment"]), []).append(row["id"])
        for (family, environment), ids in groups.items():
            for start in range(0, len(ids), size):
                group = ids[start : start + size]
                if len(group) < 2:
                    continue
                install_id = install_id or _INSTALL_ID(conn, {}).scalar()
                batch_id = f"{BATCH_ID_PREFIX}_{uuid.uuid4().hex}"
                key = provider_key_of(environment, install_id, batch_id, 1)
                _INSERT_BATCH(conn, {"batch": batch_id, "family": family, "provider_key": key, "now": clock.iso(now)})
                for position, outbox_id in enumerate(group):
                    _JOIN(conn, {"batch": batch_id, "position": position, "id": outbox_id})
                    carried[outbox_id] = group[0]
    published, seen = [], set()
    for outbox_id in outbox_ids:
        carrier = carried.get(outbox_id, outbox_id)
        if carrier not in seen:
            seen.add(carrier)
            published.append(carrier)
    return published


_BATCH_OF_ROW = Statement(
    """
    SELECT o.batch_id FROM email_outbox o JOIN email_batches b ON b.id = o.batch_id
    WHERE o.id = :id AND b.settled_at IS NULL
    """
)


def batch_of_row(db: Database, outbox_id: str) -> str | None:
    """The open batch this row rides in, or None: a row of no batch, or of one already settled."""
    with db.read() as conn:
        return _BATCH_OF_ROW(conn, {"id": outbox_id}).scalar()


# --- the claim -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchMember:
    id: str
    recipient: str
    status: str
    attempt_count: int
    outcome_unknown: bool
    first_attempt_at: str | None
    provider_message_id: str | None
    template_input: str
    created_at: str | None

    @property
    def settled(self) -> bool:
        return self.provider_message_id is not None or self.status not in UNSETTLED


@dataclass(frozen=True)
class ClaimedBatch:
    id: str
    family: str
    provider_key: str
    attempt_count: int  # the batch claim's number: every settle carries it
    sealed_at: str | None
    request_count: int
    members: tuple[BatchMember, ...]  # in position order: the request's list

    @property
    def sealed(self) -> bool:
        return self.sealed_at is not None

    @property
    def outcome_unknown(self) -> bool:
        return any(member.outcome_unknown for member in self.members)

    @property
    def unsettled(self) -> tuple[BatchMember, ...]:
        return tuple(member for member in self.members if not member.settled)

    @property
    def attempt(self) -> int:
        """The members' attempt number (they move together; the highest, if one was ever behind)."""
        return max((member.attempt_count for member in self.unsettled), default=0)

    @property
    def carrier(self) -> str:
        """A member whose ID can carry the batch's next message (the consumer routes it here)."""
        return (self.unsettled or self.members)[0].id


_CLAIM_BATCH = Statement(
    """
    UPDATE email_batches
    SET attempt_count = attempt_count + 1, claim_expires_at = :claim_expires_at, updated_at = :now
    WHERE id = :batch AND settled_at IS NULL AND (claim_expires_at IS NULL OR claim_expires_at <= :now)
    """
)
_UNCLAIM_BATCH = Statement("UPDATE email_batches SET claim_expires_at = NULL WHERE id = :batch")
# The same rule as a row's claim (claims.py): a member in flight under an expired claim whose first
# request was made (the seal stamped it) may have gone out.
_CLAIM_MEMBERS = Statement(
    f"""
    UPDATE email_outbox
    SET outcome_unknown = CASE WHEN status = '{PROCESSING}' AND first_attempt_at IS NOT NULL
                               THEN 1 ELSE outcome_unknown END,
        status = '{PROCESSING}',
        attempt_count = attempt_count + 1,
        claim_expires_at = :claim_expires_at,
        next_attempt_at = NULL,
        relay_since = :relay_since,
        updated_at = :now
    WHERE batch_id = :batch AND {CLAIMABLE}
    """
)
_BATCH = Statement(
    """
    SELECT id, family, provider_key, attempt_count, sealed_at, request_count
    FROM email_batches WHERE id = :batch
    """
)
_MEMBERS = Statement(
    f"""
    SELECT id, recipient, status, attempt_count, outcome_unknown, first_attempt_at,
           provider_message_id, {TEMPLATE_INPUT} AS template_input, created_at
    FROM email_outbox WHERE batch_id = :batch ORDER BY batch_position
    """
)
# Before the seal only: members that may not be sent settle (suppressed) or were settled elsewhere
# (cancelled by a person, a campaign cancel), and every settled one leaves the list.
_SETTLE_SUPPRESSED_MEMBERS = Statement(
    f"""
    UPDATE email_outbox
    SET status = '{SUPPRESSED}', last_error = '{SUPPRESSED_REASON}', claim_expires_at = NULL,
        next_attempt_at = NULL, relay_since = NULL, updated_at = :now
    WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)} AND provider_message_id IS NULL
      AND outcome_unknown = 0 AND {_SUPPRESSED}
    """
)
# Before the seal only: members cancelled while this batch was claimed (rows.cancel_unsent asked them
# to stop) are cancelled now, and leave with the rest.
_CANCEL_ASKED_MEMBERS = Statement(
    f"""
    UPDATE email_outbox
    SET status = '{CANCELLED}', last_error = cancel_reason, claim_expires_at = NULL,
        next_attempt_at = NULL, relay_since = NULL, updated_at = :now
    WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)} AND provider_message_id IS NULL
      AND outcome_unknown = 0 AND cancel_requested_at IS NOT NULL
    """
)
_LEAVE = Statement(
    f"""
    UPDATE email_outbox SET batch_id = NULL, batch_position = NULL
    WHERE batch_id = :batch AND (status NOT IN {sql_list(UNSETTLED)} OR provider_message_id IS NOT NULL)
    """
)
_RENUMBER = Statement(
    """
    UPDATE email_outbox
    SET batch_position = (SELECT COUNT(*) FROM email_outbox o WHERE o.batch_id = :batch
                          AND o.batch_position < email_outbox.batch_position)
    WHERE batch_id = :batch
    """
)
_RECOMPOSE = Statement(
    """
    UPDATE email_batches
    SET composition = composition + 1,
        provider_key = substr(provider_key, 1, length(provider_key) - length(CAST(composition AS TEXT)))
                       || CAST(composition + 1 AS TEXT),
        updated_at = :now
    WHERE id = :batch AND sealed_at IS NULL
    """
)
_SETTLE_BATCH_IF_DONE = Statement(
    f"""
    UPDATE email_batches SET settled_at = :now, claim_expires_at = NULL, updated_at = :now
    WHERE id = :batch AND settled_at IS NULL AND NOT EXISTS (
        SELECT 1 FROM email_outbox WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)}
          AND provider_message_id IS NULL)
    """
)


def claim_batch(
    db: Database, batch_id: str, claim_seconds: int, republish_after_seconds: int, *, now: datetime
) -> ClaimedBatch | None:
    """Admit one delivery of the batch and claim its due members with it; None when the batch is
    claimed elsewhere, settled, or has no member due at `now` (nothing changes then).

    Before the seal, members that may not be sent leave first (see `_let_leavers_go`)."""
    params = {
        "batch": batch_id,
        "now": clock.iso(now),
        "claim_expires_at": clock.iso_in(claim_seconds, now),
        "relay_since": clock.iso_in(claim_seconds - republish_after_seconds, now),
    }
    with db.write() as conn:
        if _CLAIM_BATCH(conn, params).rowcount != 1:
            return None
        batch = _BATCH(conn, params).mappings().first()
        if batch["sealed_at"] is None:
            _let_leavers_go(conn, params)
        if _CLAIM_MEMBERS(conn, params).rowcount == 0:
            # Not due yet, or every member settled: the batch is free again (or done).
            _UNCLAIM_BATCH(conn, params)
            _SETTLE_BATCH_IF_DONE(conn, params)
            return None
        return _read_claimed(conn, params)


def _let_leavers_go(conn: sa.Connection, params: dict) -> bool:
    """Unsealed only: settle members that may not be sent, and take every settled one off the list
    (recomposing the key). True when the list changed."""
    _SETTLE_SUPPRESSED_MEMBERS(conn, params)
    _CANCEL_ASKED_MEMBERS(conn, params)
    if _LEAVE(conn, params).rowcount == 0:
        return False
    _RENUMBER(conn, params)
    _RECOMPOSE(conn, params)
    _SETTLE_BATCH_IF_DONE(conn, params)
    return True


def _read_claimed(conn: sa.Connection, params: dict) -> ClaimedBatch:
    batch = _BATCH(conn, params).mappings().first()
    members = tuple(
        BatchMember(**{**row, "outcome_unknown": bool(row["outcome_unknown"])})
        for row in _MEMBERS(conn, params).mappings().all()
    )
    return ClaimedBatch(**batch, members=members)


_NEXT_DUE = Statement(
    f"""
    SELECT MIN(next_attempt_at) FROM email_outbox
    WHERE batch_id = :batch AND provider_message_id IS NULL AND status IN {sql_list(WAITING)}
      AND next_attempt_at > :now
    """
)


def seconds_until_batch_due(db: Database, batch_id: str, *, now: datetime) -> float | None:
    """For a batch that could not be claimed at `now`: how long until its members' retry time, or
    None if they wait for none (claimed elsewhere, settled)."""
    with db.read() as conn:
        due = _NEXT_DUE(conn, {"batch": batch_id, "now": clock.iso(now)}).scalar()
    return None if due is None else (clock.parse(due) - now).total_seconds()


# --- members that cannot ride -----------------------------------------------------------------

_LET_GO = Statement(
    f"""
    UPDATE email_outbox
    SET batch_id = NULL, batch_position = NULL, status = '{RETRY}', next_attempt_at = :now,
        relay_since = :now, last_error = :reason, claim_expires_at = NULL, updated_at = :now
    WHERE id = :id AND batch_id = :batch AND status = '{PROCESSING}' AND provider_message_id IS NULL
      AND {_OURS} AND NOT EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.sealed_at IS NOT NULL)
    """
)


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
            if _LET_GO(conn, {**params, "id": outbox_id}).rowcount == 1:
                left.append(outbox_id)
        if left:
            _RENUMBER(conn, params)
            _RECOMPOSE(conn, params)
            _SETTLE_BATCH_IF_DONE(conn, params)
    return left


# --- the seal, just before a request -------------------------------------------------------------

_SEAL = Statement(
    f"""
    UPDATE email_batches
    SET sealed_at = COALESCE(sealed_at, :now), request_count = request_count + 1, updated_at = :now
    WHERE id = :batch AND attempt_count = :attempt AND settled_at IS NULL
      AND claim_expires_at IS NOT NULL AND claim_expires_at > :now
      AND EXISTS (SELECT 1 FROM email_outbox WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)}
                  AND provider_message_id IS NULL)
    """
)
_STAMP_FIRST_ATTEMPT = Statement(
    f"""
    UPDATE email_outbox SET first_attempt_at = COALESCE(first_attempt_at, :now), updated_at = :now
    WHERE batch_id = :batch AND status = '{PROCESSING}' AND provider_message_id IS NULL
    """
)


_LOG_REQUEST = Statement(
    f"""
    INSERT INTO email_batch_requests (batch_id, number, provider_key, size, requested_at)
    SELECT id, request_count, provider_key,
           (SELECT COUNT(*) FROM email_outbox WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)}
              AND provider_message_id IS NULL), :now
    FROM email_batches WHERE id = :batch
    """
)
# The answer to this claim's latest request (never to an earlier one a dead worker left unanswered).
_LOG_ANSWER = Statement(
    """
    UPDATE email_batch_requests SET answer = :request_answer, answered_at = :now
    WHERE batch_id = :batch AND answer IS NULL
      AND number = (SELECT request_count FROM email_batches WHERE id = :batch AND attempt_count = :attempt)
    """
)


def _log_answer(conn: sa.Connection, params: dict, request_answer: str | None) -> None:
    if request_answer is not None:
        _LOG_ANSWER(conn, {**params, "request_answer": request_answer})


def seal_batch_request(db: Database, batch: ClaimedBatch, *, now: datetime) -> ClaimedBatch | None:
    """Record, in one write, that a request of this batch is about to be made; returns the batch as
    it will be sent, or None when it must not be (our claim was lost, or no member is left).

    An unsealed batch lets its leavers go first, so this is the last check before the provider call:
    a member cancelled or deactivated until now never rides."""
    params = {"batch": batch.id, "attempt": batch.attempt_count, "now": clock.iso(now)}
    with db.write() as conn:
        if batch.sealed_at is None:
            _let_leavers_go(conn, params)
        if _SEAL(conn, params).rowcount != 1:
            return None
        _LOG_REQUEST(conn, params)
        _STAMP_FIRST_ATTEMPT(conn, params)
        return _read_claimed(conn, params)


# --- settling what the answer said ---------------------------------------------------------------

# One statement for the whole list (the write lock is held for one, not a hundred): each member
# takes the ID at its position in the answer.
_MARK_MEMBERS_SENT = Statement(
    f"""
    UPDATE email_outbox
    SET status = '{SENT}', provider_message_id = json_extract(:message_ids, '$[' || batch_position || ']'),
        sent_at = :now, claim_expires_at = NULL, next_attempt_at = NULL, relay_since = NULL,
        last_error = NULL, outcome_unknown = 0, updated_at = :now
    WHERE batch_id = :batch AND provider_message_id IS NULL AND batch_position < json_array_length(:message_ids)
    """
)
_RECORD_ANSWER = Statement("UPDATE email_batches SET last_answer = :answer, updated_at = :now WHERE id = :batch")
# A settled batch's payloads go with it (a sealed, unsettled batch keeps every member's: see rows.py).
_DELETE_MEMBER_PAYLOADS = Statement(
    """
    DELETE FROM email_frozen_payloads
    WHERE outbox_id IN (SELECT id FROM email_outbox WHERE batch_id = :batch)
      AND EXISTS (SELECT 1 FROM email_batches WHERE id = :batch AND settled_at IS NOT NULL)
    """
)


def mark_batch_sent(db: Database, batch: ClaimedBatch, message_ids: list[str], *, now: datetime) -> int:
    """The provider took the list: each member gets the ID at its position. Returns how many changed
    (a member a receipt settled meanwhile already holds its ID)."""
    params = {"batch": batch.id, "attempt": batch.attempt_count, "now": clock.iso(now), "answer": "sent"}
    if len(message_ids) != len(batch.members):
        raise ValueError(f"{len(message_ids)} message IDs for a list of {len(batch.members)}")
    with db.write() as conn:
        _log_answer(conn, params, f"accepted: {len(message_ids)} message IDs")
        changed = _MARK_MEMBERS_SENT(conn, {**params, "message_ids": json_array(message_ids)}).rowcount
        _finish(conn, params)
    return changed


_RELEASE_MEMBERS = Statement(
    f"""
    UPDATE email_outbox
    SET status = '{RETRY}', next_attempt_at = :next_at, relay_since = :next_at, last_error = :reason,
        claim_expires_at = NULL, attempt_count = attempt_count - :given_back,
        outcome_unknown = MAX(outcome_unknown, :unknown), updated_at = :now
    WHERE batch_id = :batch AND provider_message_id IS NULL AND status = '{PROCESSING}' AND {_OURS}
    """
)
_RELEASE_BATCH = Statement(
    """
    UPDATE email_batches SET claim_expires_at = NULL, last_answer = :reason, updated_at = :now
    WHERE id = :batch AND attempt_count = :attempt
    """
)


def release_batch(
    db: Database,
    batch: ClaimedBatch,
    delay_seconds: float,
    reason: str,
    outcome_unknown: bool,
    *,
    now: datetime,
    counts_as_attempt: bool = True,
    request_answer: str | None = None,
) -> bool:
    """Our claim ends; every member waits for the batch's next attempt, `delay_seconds` after `now`.
    A release in which nothing was sent and nothing went wrong (a wait for a rate slot) gives the
    attempt back. Only the claim holder's release counts."""
    params = {"batch": batch.id, "attempt": batch.attempt_count, "reason": reason, "now": clock.iso(now)}
    params.update(next_at=clock.iso_in(delay_seconds, now), unknown=int(outcome_unknown))
    params["given_back"] = int(not counts_as_attempt)
    with db.write() as conn:
        _log_answer(conn, params, request_answer)
        changed = _RELEASE_MEMBERS(conn, params).rowcount
        _RELEASE_BATCH(conn, params)
    return changed > 0


# The same rule as rows.py's settle: a member that may already have gone out becomes a dead letter
# with unknown_outcome, never failed.
_SETTLE_MEMBERS_UNSENT = Statement(
    f"""
    UPDATE email_outbox
    SET status = CASE WHEN outcome_unknown = 1 THEN '{DEAD_LETTER}' ELSE :status END,
        last_error = CASE WHEN outcome_unknown = 1 THEN '{UNKNOWN_OUTCOME}' ELSE :reason END,
        outcome_unknown = CASE WHEN outcome_unknown = 1 OR :reason = '{UNKNOWN_OUTCOME}' THEN 1 ELSE 0 END,
        claim_expires_at = NULL, next_attempt_at = NULL, relay_since = NULL, updated_at = :now
    WHERE batch_id = :batch AND provider_message_id IS NULL AND status = '{PROCESSING}' AND {_OURS}
    """
)


def settle_batch_unsent(
    db: Database, batch: ClaimedBatch, status: str, reason: str, *, now: datetime, request_answer: str | None = None
) -> int:
    """The claim holder's final state for every member still in flight, none holding a message ID
    (failed, or a dead letter: exhausted, unknown outcome)."""
    assert status in (FAILED, DEAD_LETTER)
    params = {"batch": batch.id, "attempt": batch.attempt_count, "status": status, "reason": reason}
    params.update(now=clock.iso(now), answer=reason)
    with db.write() as conn:
        _log_answer(conn, params, request_answer)
        changed = _SETTLE_MEMBERS_UNSENT(conn, params).rowcount
        _finish(conn, params)
    return changed


_DISSOLVE_MEMBERS = Statement(
    f"""
    UPDATE email_outbox
    SET batch_id = NULL, batch_position = NULL, status = '{RETRY}', next_attempt_at = :now,
        relay_since = :now, last_error = :reason, claim_expires_at = NULL, updated_at = :now
    WHERE batch_id = :batch AND provider_message_id IS NULL AND status = '{PROCESSING}'
      AND outcome_unknown = 0 AND {_OURS}
    RETURNING id
    """
)
_SETTLE_DISSOLVED = Statement(
    "UPDATE email_batches SET settled_at = :now, claim_expires_at = NULL, last_answer = :reason, "
    "updated_at = :now WHERE id = :batch AND attempt_count = :attempt"
)


def dissolve_batch(
    db: Database, batch: ClaimedBatch, reason: str, *, now: datetime, request_answer: str | None = None
) -> list[str]:
    """A strict batch refused as a whole (a 4xx: nothing of it was sent, and no earlier request may
    have been): its members go on alone, each under its own key, so the one the provider refuses
    fails by itself and the others are sent. Returns the IDs that left; the caller publishes them."""
    params = {"batch": batch.id, "attempt": batch.attempt_count, "reason": reason, "now": clock.iso(now)}
    with db.write() as conn:
        _log_answer(conn, params, request_answer)
        left = list(_DISSOLVE_MEMBERS(conn, params).scalars())
        _SETTLE_DISSOLVED(conn, params)
    return left


def _finish(conn: sa.Connection, params: dict) -> None:
    _RECORD_ANSWER(conn, params)
    _SETTLE_BATCH_IF_DONE(conn, params)
    _DELETE_MEMBER_PAYLOADS(conn, params)


# --- what the console shows --------------------------------------------------------------------


@dataclass(frozen=True)
class BatchFacts:
    id: str
    provider_key: str
    composition: int
    position: int
    size: int
    request_count: int
    sealed_at: str | None
    settled_at: str | None
    last_answer: str | None


_FACTS = sa.text(
    """
    SELECT b.id, b.provider_key, b.composition, o.batch_position AS position,
           (SELECT COUNT(*) FROM email_outbox m WHERE m.batch_id = b.id) AS size,
           b.request_count, b.sealed_at, b.settled_at, b.last_answer
    FROM email_outbox o JOIN email_batches b ON b.id = o.batch_id WHERE o.id = :id
    """
)


def batch_facts(conn: sa.Connection, outbox_id: str) -> BatchFacts | None:
    """The batch a row rides (or rode) in, for the console; None for a row sent alone."""
    row = conn.execute(_FACTS, {"id": outbox_id}).mappings().first()
    return None if row is None else BatchFacts(**row)


@dataclass(frozen=True)
class BatchRequest:
    number: int
    provider_key: str
    size: int
    requested_at: str
    answer: str | None  # None: no answer was recorded (the worker died, or the answer was lost)
    answered_at: str | None


_REQUESTS = sa.text(
    """
    SELECT number, provider_key, size, requested_at, answer, answered_at
    FROM email_batch_requests WHERE batch_id = :batch ORDER BY number
    """
)


def batch_requests(conn: sa.Connection, batch_id: str) -> list[BatchRequest]:
    """Every request the batch made, oldest first."""
    return [BatchRequest(**row) for row in conn.execute(_REQUESTS, {"batch": batch_id}).mappings()]
