"""What a batch's request ended in, settled for every member in one write, with the request log's answer.

Every settle here carries the batch claim's number (OWN_CLAIM): a delivery whose claim expired and
was taken over changes nothing. A settled batch's frozen payloads go with it; until then a sealed
batch keeps every member's, since each retry rebuilds the whole list from them (rows.py keeps them
too when a receipt settles one member alone).
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database, json_array
from portal.core.driver import Statement, Steps
from portal.outbox.ground.batch_rows import (
    RECORD_ANSWER,
    RELEASE_BATCH,
    SETTLE_BATCH_IF_DONE,
    SETTLE_DISSOLVED,
    answer_steps,
    close_request,
)
from portal.outbox.ground.rows import DISSOLVE_MEMBERS, MARK_MEMBERS_SENT, RELEASE_MEMBERS, SETTLE_MEMBERS_UNSENT
from portal.outbox.ground.statuses import DEAD_LETTER, FAILED
from portal.outbox.send.batch.held import ClaimedBatch

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
    steps = Steps().extend(answer_steps(params, f"accepted: {len(message_ids)} message IDs"))
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
    attempt back; with `withdraw`, the request the seal recorded was never made (batch/claim.py).
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
        _finish(conn, params)
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


def _finish(conn: sa.Connection, params: dict) -> None:
    for statement, values in _finish_steps(params):
        statement(conn, values)


def _finish_steps(params: dict) -> list:
    return [(RECORD_ANSWER, params), (SETTLE_BATCH_IF_DONE, params), (_DELETE_MEMBER_PAYLOADS, params)]
