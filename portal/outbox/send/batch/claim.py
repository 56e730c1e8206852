"""A claimed batch: up to OUTBOX_BATCH_SIZE rows of one family sent in one provider request under one key.

Resend's POST /emails/batch takes up to 100 emails under one idempotency key and refuses a second
body under a key it has seen. So a batch is decided in the database before anything is sent, and
every statement here and in its neighbours keeps three facts true:

- **The composition is written first** (composition.py): the batch row, its key and each
  member's position commit before the batch's message reaches the queue.
- **The seal freezes it.** Just before a request, `batch.seal.seal_batch_request` stamps the batch (and each
  member's first attempt) in one write. From then on no member leaves and no position changes, so
  every retry builds the same list from the members' frozen payloads, in position order, under the
  same key: the provider's 409 for a changed body cannot happen.
- **Before the seal, a row that may no longer be sent leaves.** A member cancelled, suppressed or
  asked to stop (a deactivation while the batch is claimed) leaves at the claim or at the seal; the
  key's last part counts up, since the list is no longer the one composed. Nothing was sent under
  any of the batch's keys yet, so nothing can go twice.

A batch has its own claim (one delivery at a time, as for a row); its members are claimed with it,
and every settle (batch/outcomes.py) carries the batch claim's number. A batch whose claim expired
after its seal may have been sent by the delivery that died: its members' outcome is unknown from
then on, exactly as for a row (the claim's CASE below is the same rule).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database, json_array
from portal.core.driver import Statement, Steps
from portal.outbox.ground.batch_rows import (
    CLAIM_BATCH,
    LOG_REQUEST_IF_SEALED,
    RECOMPOSE_IF_RENUMBERED,
    SEAL_WHOLE_CLAIMED,
    SETTLE_BATCH_IF_DONE,
    UNCLAIM_IF_NONE_DUE,
)
from portal.outbox.ground.rows import (
    CANCEL_ASKED_MEMBERS,
    CLAIM_MEMBERS,
    CLAIMABLE,
    LEAVE,
    MUST_NOT_SEND,
    RENUMBER_IF_LEFT,
    SEALED_LEAVE,
    SETTLE_SUPPRESSED_MEMBERS,
    STAMP_FIRST_ATTEMPT_IF_LOGGED,
)
from portal.outbox.ground.statuses import (
    WAITING,
    sql_list,
)
from portal.outbox.send.batch.held import ClaimedBatch, claimed_from, if_still_ours
from portal.outbox.send.freeze import freeze_steps, stored_rows
from portal.outbox.write.intents import TEMPLATE_INPUT

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


def run_in(conn: sa.Connection, steps: list) -> list:
    """Steps inside the caller's write: for the rare paths that decide between statements."""
    return [statement(conn, values) for statement, values in steps]


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
