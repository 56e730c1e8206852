"""A list of up to 100 emails sent together to POST /emails/batch under one key: the attempt path's
second way (attempt.py says when each step happens; this module says how each is written for a list).

Resend's POST /emails/batch takes up to 100 emails under one idempotency key and refuses a second
body under a key it has seen. So a batch is decided in the database before anything is sent, and
every statement of it (ground/batch_rows.py, and the members' in ground/rows.py) keeps three facts:

- **The composition is written first** (write/composition.py): the batch row, its key and each
  member's position commit before the batch's message reaches the queue.
- **The seal freezes it.** Just before a request, `seal_batch_request` stamps the batch (and each
  member's first attempt) in one write. From then on no member joins and no position changes, so
  every retry builds the same list from the members' frozen payloads, in position order, under the
  same key: the provider's 409 for a changed body cannot happen.
- **Before the seal, a row that may no longer be sent leaves.** A member cancelled, suppressed or
  asked to stop (a deactivation while the batch is claimed) leaves at the claim or at the seal; the
  key's last part counts up, since the list is no longer the one composed. Nothing was sent under
  any of the batch's keys yet, so nothing can go twice. After the seal, such a member leaves as a
  single email would settle (`sealed_leaver_steps`), and the rest keep the key.

A batch has its own claim (one delivery at a time, as for a row); its members are claimed with it,
and every settle carries the batch claim's number (OWN_CLAIM): a delivery whose claim expired and
was taken over changes nothing. A batch whose claim expired after its seal may have been sent by
the delivery that died: its members' outcome is unknown from then on, exactly as for a row.

What a list adds to one email's path:
- **its first request is rendered before its claim**, and the claim stores the payloads and seals
  in its own write (`claim_batch`): one write lock fewer. Otherwise it renders after its claim, and
  the seal stores the payloads;
- **the seal** records each request just before it is made; every seal reads back what is stored,
  and that is what is sent;
- **members that cannot ride** (an attachment, a payload that would not render) leave before the
  seal and go on alone, under their own keys;
- **strict validation** (ground/provider.py says why): the answer is all or nothing, so a 4xx proves
  nothing of this list was sent, and its members go on alone (`dissolve_batch`), where the one the
  provider refuses fails by itself.

The module reads in the order of a delivery: the batch as a delivery holds it, the claim, the
seal and what a wait changed, the settles, and the way (`EmailList`) that attempt.py drives.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from portal.core import clock
from portal.core.db import Database, json_array
from portal.core.driver import Statement, Steps, run_steps
from portal.outbox.ground import metrics
from portal.outbox.ground.batch_rows import (
    CLAIM_BATCH,
    LOG_REQUEST_IF_SEALED,
    RECOMPOSE,
    RECOMPOSE_IF_RENUMBERED,
    RECORD_ANSWER,
    RELEASE_BATCH,
    SEAL,
    SEAL_WHOLE_CLAIMED,
    SETTLE_BATCH_IF_DONE,
    SETTLE_DISSOLVED,
    UNCLAIM_IF_NONE_DUE,
    UNSEAL_IF_NOTHING_TAKEN,
    answer_steps,
    close_request,
)
from portal.outbox.ground.families import Family
from portal.outbox.ground.handles import PortalContext
from portal.outbox.ground.provider import BatchItem
from portal.outbox.ground.rendering import RenderedEmail
from portal.outbox.ground.retry import family_max_attempts
from portal.outbox.ground.rows import (
    CANCEL_ASKED_MEMBERS,
    CLAIM_MEMBERS,
    CLAIMABLE,
    DISSOLVE_MEMBERS,
    LEAVE,
    LET_GO,
    MARK_MEMBERS_SENT,
    MUST_NOT_SEND,
    RELEASE_MEMBERS,
    RENUMBER,
    RENUMBER_IF_LEFT,
    SEALED_LEAVE,
    SETTLE_MEMBERS_UNSENT,
    SETTLE_SUPPRESSED_MEMBERS,
    STAMP_FIRST_ATTEMPT_IF_LOGGED,
    SUPPRESSED_RECIPIENT,
)
from portal.outbox.ground.statuses import (
    CLAIM_LOST,
    DEAD_LETTER,
    FAILED,
    REQUEST_ACCEPTED,
    UNKNOWN_OUTCOME,
    UNSETTLED,
    WAITING,
    sql_list,
)
from portal.outbox.send.attempt import SETTLED, DeliveryOutcome, Release, Unsent
from portal.outbox.send.freeze import (
    FreezeError,
    ensure_store_available,
    freeze_steps,
    payload_of,
    stored_rows,
    validated_by_row,
)
from portal.outbox.write.intents import TEMPLATE_INPUT
from portal.outbox.write.publish import publish_outbox_rows

log = logging.getLogger(__name__)
CANNOT_RIDE = "batch_cannot_carry"  # a member's payload a batch may not hold (an attachment)
WOULD_NOT_RENDER = "batch_render_failed"


# --- the batch as a delivery holds it --------------------------------------------------------


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
    claim_token: str | None  # written by the claim; the seal's guards ask for it
    members: tuple[BatchMember, ...]  # in position order: the request's list
    # Frozen payloads read with the claim, by member ID (a sealed batch's retry rebuilds its list).
    frozen: tuple = ()
    sealed_by_claim: bool = False  # the claim stored every member's first payload and sealed, in its write
    # First-attempt payloads rendered after the claim (freeze.payload_of), for the seal to store.
    to_freeze: tuple = ()

    @cached_property
    def messages(self) -> dict[str, RenderedEmail]:
        """The frozen payloads, validated (FreezeError if one is not whole), by member ID: once per
        claim or seal, though the delivery asks before its seal and again before its request."""
        return validated_by_row(self.frozen)

    @property
    def sealed(self) -> bool:
        return self.sealed_at is not None

    @property
    def window_start(self) -> str | None:
        """When the provider may first have seen the key: the seal of its first request."""
        return self.sealed_at

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


def if_still_ours(batch: ClaimedBatch, token: str) -> ClaimedBatch | None:
    """A batch read after its claim's (or seal's) write committed (Database.write_steps_then_read):
    None if another delivery took the claim over in between, or the read would hand this delivery
    that one's claim."""
    return batch if batch.claim_token == token else None


def claimed_from(batch, members, frozen: Sequence) -> ClaimedBatch:
    """The batch from the results of `batch_reads` and its members' frozen payloads as rows (only
    the current members' are kept, as a read of them would)."""
    members = tuple(
        BatchMember(**{**row, "outcome_unknown": bool(row["outcome_unknown"])}) for row in members.mappings().all()
    )
    ids = {member.id for member in members}
    return ClaimedBatch(
        **batch.mappings().first(),
        members=members,
        frozen=tuple(row for row in frozen if row["outbox_id"] in ids),
    )


# --- the claim -----------------------------------------------------------------------------------


_BATCH = Statement(
    """
    SELECT id, family, provider_key, attempt_count, sealed_at, request_count, claim_token
    FROM email_batches WHERE id = :batch
    """
)
_FROZEN_OF_MEMBERS = Statement(
    "SELECT * FROM email_frozen_payloads WHERE outbox_id IN (SELECT id FROM email_outbox WHERE batch_id = :batch)"
)
_FROZEN_OF_OTHER_MEMBERS = Statement(
    """
    SELECT * FROM email_frozen_payloads
    WHERE outbox_id IN (SELECT id FROM email_outbox WHERE batch_id = :batch)
      AND outbox_id NOT IN (SELECT value FROM json_each(:ours))
    """
)
_MEMBERS = Statement(
    f"""
    SELECT id, recipient, status, attempt_count, outcome_unknown, first_attempt_at,
           provider_message_id, {TEMPLATE_INPUT} AS template_input, created_at
    FROM email_outbox WHERE batch_id = :batch ORDER BY batch_position
    """
)
_DROP_PAYLOADS_OF_SEALED_LEAVERS = Statement(
    f"DELETE FROM email_frozen_payloads WHERE outbox_id IN (SELECT id FROM email_outbox WHERE {MUST_NOT_SEND})"
)


def claim_batch(
    db: Database,
    batch_id: str,
    claim_seconds: int,
    republish_after_seconds: int,
    *,
    now: datetime,
    payloads: Sequence[dict] = (),
    max_attempts: int = 0,
) -> ClaimedBatch | None:
    """Admit one delivery of the batch and claim its due members with it; None when the batch is
    claimed elsewhere, settled, or has no member due at `now` (nothing changes then).

    Members that may not be sent leave first: before the seal (see `leaver_steps`), and after it
    (a takeover of a sealed list; see `sealed_leaver_steps`). One write of
    statements guarded in SQL (see above), then the batch read with the members' frozen payloads
    (on a local file after the commit, so the other writers need not wait for the read).

    `payloads`: first-attempt payloads rendered before the claim (`first_attempt_inputs`). The
    claim stores them, as a seal would, and seals in the same write when the list is then whole:
    every member left has a stored payload and attempts left (`max_attempts`). One write and one
    turn instead of two; `sealed_by_claim` says whether it sealed. Otherwise the payloads it stored
    stay (the first frozen payload wins) and the delivery seals as usual."""
    values = {
        "batch": batch_id,
        "token": uuid.uuid4().hex,
        "now": clock.iso(now),
        "claim_expires_at": clock.iso_in(claim_seconds, now),
        "relay_since": clock.iso_in(claim_seconds - republish_after_seconds, now),
        "max_attempts": max_attempts,
    }
    steps = Steps().add("batch_claimed", CLAIM_BATCH, values).extend(leaver_steps(values))
    # UNCLAIM_IF_NONE_DUE asks changes() of CLAIM_MEMBERS: it comes right after.
    steps.add("members_claimed", CLAIM_MEMBERS, values).extend([(UNCLAIM_IF_NONE_DUE, values)])
    steps.extend(sealed_leaver_steps(values))
    if not payloads:
        written, (batch_row, members, frozen) = db.write_steps_then_read(steps, read_steps(values))
        if written["batch_claimed"].rowcount != 1 or written["members_claimed"].rowcount == 0:
            return None
        return if_still_ours(claimed_from(batch_row, members, frozen.mappings().all()), values["token"])
    for statement, stored_values in freeze_steps(payloads, claim=values):
        steps.add("froze", statement, stored_values)
    steps.add("sealed", SEAL_WHOLE_CLAIMED, values)
    steps.extend([(LOG_REQUEST_IF_SEALED, values), (STAMP_FIRST_ATTEMPT_IF_LOGGED, values)])
    ours = {**values, "ours": json_array(payload["id"] for payload in payloads)}
    reads = [*batch_reads(values), (_FROZEN_OF_OTHER_MEMBERS, ours)]
    written, (batch_row, members, others) = db.write_steps_then_read(steps, reads)
    if written["batch_claimed"].rowcount != 1 or written["members_claimed"].rowcount == 0:
        return None
    frozen = frozen_after_storing(db, values, payloads, written["froze"].rowcount, others.mappings().all())
    claimed = if_still_ours(claimed_from(batch_row, members, frozen), values["token"])
    if claimed is not None and written["sealed"].rowcount == 1:
        return dataclasses.replace(claimed, sealed_by_claim=True)
    return claimed


# The batch's members a claim at `now` would take for a first request of an unsealed batch, with
# their whole template input: what to render before the claim. Nothing for a batch claimed
# elsewhere, sealed or settled, or with a member that was attempted or holds a frozen payload
# (the delivery then renders after its claim, as for a retry).
_FIRST_ATTEMPT_INPUTS_SQL = f"""
    SELECT id, {TEMPLATE_INPUT} AS template_input FROM email_outbox
    WHERE batch_id = :batch AND {CLAIMABLE}
      AND EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.sealed_at IS NULL
                  AND b.settled_at IS NULL AND (b.claim_expires_at IS NULL OR b.claim_expires_at <= :now))
      AND NOT EXISTS (SELECT 1 FROM email_outbox m WHERE m.batch_id = :batch
                      AND (m.first_attempt_at IS NOT NULL OR m.attempt_count > 0
                           OR EXISTS (SELECT 1 FROM email_frozen_payloads f WHERE f.outbox_id = m.id)))
    ORDER BY batch_position
"""
_FIRST_ATTEMPT_INPUTS = Statement(_FIRST_ATTEMPT_INPUTS_SQL)
# The unsettled batch a row rides in, and the same first request found from the row: the consumer
# asks both (with the row's own first input, freeze.FIRST_ATTEMPT_INPUT) in one read.
BATCH_OF_ROW = Statement(
    """
    SELECT o.batch_id FROM email_outbox o JOIN email_batches b ON b.id = o.batch_id
    WHERE o.id = :id AND b.settled_at IS NULL
    """
)
FIRST_ATTEMPT_INPUTS_OF_ROWS_BATCH = Statement(
    _FIRST_ATTEMPT_INPUTS_SQL.replace(":batch", "(SELECT r.batch_id FROM email_outbox r WHERE r.id = :id)")
)


def first_attempt_inputs(db: Database, batch_id: str, *, now: datetime) -> list[tuple[str, str]]:
    """(member ID, stored template input) of a batch's first request, before its claim at `now`
    (see _FIRST_ATTEMPT_INPUTS); empty when the delivery renders after its claim."""
    (found,) = db.read_steps([(_FIRST_ATTEMPT_INPUTS, {"batch": batch_id, "now": clock.iso(now)})])
    return inputs_of(found)


def inputs_of(found) -> list[tuple[str, str]]:
    return [(row.id, row.template_input) for row in found.all()]


def leaver_steps(values: dict) -> list:
    """Unsealed and ours only: settle members that may not be sent, take every settled one off the
    list, and (if one left) renumber the rest and recompose the key."""
    return [
        (SETTLE_SUPPRESSED_MEMBERS, values),
        (CANCEL_ASKED_MEMBERS, values),
        (LEAVE, values),
        (RENUMBER_IF_LEFT, values),
        (RECOMPOSE_IF_RENUMBERED, values),
        (SETTLE_BATCH_IF_DONE, values),
    ]


def sealed_leaver_steps(values: dict) -> list:
    """Sealed and ours only: members that must no longer be sent settle and leave (see SEALED_LEAVE);
    the rest are renumbered, under the same key."""
    return [
        (_DROP_PAYLOADS_OF_SEALED_LEAVERS, values),
        (SEALED_LEAVE, values),
        (RENUMBER_IF_LEFT, values),
        (SETTLE_BATCH_IF_DONE, values),
    ]


def batch_reads(values: dict) -> list:
    """The batch and its members, in position order."""
    return [(_BATCH, values), (_MEMBERS, values)]


def read_steps(values: dict) -> list:
    """The batch, its members and their frozen payloads: what `claimed_from` is made of."""
    return [*batch_reads(values), (_FROZEN_OF_MEMBERS, values)]


def frozen_after_storing(db: Database, values: dict, payloads: Sequence[dict], stored: int, known: Sequence) -> list:
    """The members' frozen payloads after a write that stored first-attempt `payloads` (freeze_steps)
    and reported `stored` rows: when every one was stored as given, the rows read or held before
    (`known`) and those payloads, unread; otherwise read, since a payload stored before ours wins
    and what is stored is what is sent."""
    if stored == len(payloads):
        return [*known, *stored_rows(payloads)]
    (frozen,) = db.read_steps([(_FROZEN_OF_MEMBERS, values)])
    return frozen.mappings().all()


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
    settles as a single email would and the rest keep the key (batch.sealed_leaver_steps)."""
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
        run_steps(conn, steps)
        batch_row, members, frozen = run_steps(conn, read_steps(params))
        reopened = if_still_ours(claimed_from(batch_row, members, frozen.mappings().all()), batch.claim_token)
    return reopened if reopened is not None else CLAIM_LOST


# --- the settles: what a request ended in, for every member in one write --------------------
# A settled batch's frozen payloads go with it; until then a sealed batch keeps every member's,
# since each retry rebuilds the whole list from them (rows.py keeps them too when a receipt
# settles one member alone).

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
    steps = Steps().extend(answer_steps(params, REQUEST_ACCEPTED))
    steps.add("marked", MARK_MEMBERS_SENT, {**params, "message_ids": json_array(message_ids)})
    steps.extend(_finish_steps(params))
    return db.write_steps(steps)["marked"].rowcount


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
    withdraw: bool = False,
) -> bool:
    """Our claim ends; every member waits for the batch's next attempt, `delay_seconds` after `now`.
    A release in which nothing was sent and nothing went wrong (a wait for a rate slot) gives the
    attempt back; with `withdraw`, the request the seal recorded was never made (send/batch.py).
    Only the claim holder's release counts."""
    params = {"batch": batch.id, "attempt": batch.attempt_count, "reason": reason, "now": clock.iso(now)}
    params.update(next_at=clock.iso_in(delay_seconds, now), unknown=int(outcome_unknown))
    params["given_back"] = int(not counts_as_attempt)
    with db.write() as conn:
        close_request(conn, params, request_answer, withdraw=withdraw)
        changed = RELEASE_MEMBERS(conn, params).rowcount
        RELEASE_BATCH(conn, params)
    return changed > 0


def settle_batch_unsent(
    db: Database,
    batch: ClaimedBatch,
    status: str,
    reason: str,
    *,
    now: datetime,
    request_answer: str | None = None,
    withdraw: bool = False,
) -> int:
    """The claim holder's final state for every member still in flight, none holding a message ID
    (failed, or a dead letter: exhausted, unknown outcome)."""
    assert status in (FAILED, DEAD_LETTER)
    params = {"batch": batch.id, "attempt": batch.attempt_count, "status": status, "reason": reason}
    params.update(now=clock.iso(now), answer=reason)
    with db.write() as conn:
        close_request(conn, params, request_answer, withdraw=withdraw)
        changed = SETTLE_MEMBERS_UNSENT(conn, params).rowcount
        run_steps(conn, _finish_steps(params))
    return changed


def dissolve_batch(
    db: Database, batch: ClaimedBatch, reason: str, *, now: datetime, request_answer: str | None = None
) -> list[str]:
    """A strict batch refused as a whole (a 4xx: nothing of it was sent, and no earlier request may
    have been): its members go on alone, each under its own key, so the one the provider refuses
    fails by itself and the others are sent. Returns the IDs that left; the caller publishes them."""
    params = {"batch": batch.id, "attempt": batch.attempt_count, "reason": reason, "now": clock.iso(now)}
    with db.write() as conn:
        close_request(conn, params, request_answer)
        left = list(DISSOLVE_MEMBERS(conn, params).scalars())
        SETTLE_DISSOLVED(conn, params)
    return left


def _finish_steps(params: dict) -> list:
    return [(RECORD_ANSWER, params), (SETTLE_BATCH_IF_DONE, params), (_DELETE_MEMBER_PAYLOADS, params)]


# --- the way: how attempt.py's steps are written for a list -------------------------------


@dataclass(frozen=True)
class EmailList:
    batch_id: str
    # (member ID, stored input) of the batch's first request, read with the consumer's routing
    # (batch.FIRST_ATTEMPT_INPUTS_OF_ROWS_BATCH); empty: the delivery renders after its claim.
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
        """Members that may not be sent left the list in the claim's own write (send/batch.py)."""
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
