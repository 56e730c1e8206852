"""Composing batches: which waiting rows ride together, in which order, under which key.

Rows of a batchable family that no attempt has reached are grouped, in the order they were written,
into batches of up to OUTBOX_BATCH_SIZE; each batch's row, key and members' positions are written
by two statements (`compose_steps`). There is one way to compose, and it runs inside a write:

- an area's write composes the rows it adds, in its own transaction (unit_of_work.py): the rows
  and their batch commit together, so a batch is always composed before its message can reach
  the queue, and a publication that fails leaves rows the relay publishes with their batch;
- the relay, for rows left pending without a batch (written before composition moved into the
  write, or by a write that does not compose), reads them and composes them in a write of its own
  (`messages_to_publish`).

What happens to a batch after that is send/batch.py's (claim, seal, settles).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

from portal.core import clock
from portal.core.db import Database, json_array
from portal.core.driver import Statement, Steps
from portal.outbox.ground.batch_rows import INSERT_BATCHES
from portal.outbox.ground.families import new_row_id
from portal.outbox.ground.provider import BATCH_LIMIT
from portal.outbox.ground.rows import JOIN_BATCHES
from portal.outbox.ground.statuses import WAITING, among_named, sql_list

BATCH_ID_PREFIX = "bat"


# Rows that may join a batch: waiting, never attempted, in none yet. Their creation order is the
# batch's order (rowid: one page of the table, and the order intents were written in).
_JOINABLE = Statement(
    f"""
    SELECT id, family, environment, batch_id, first_attempt_at FROM email_outbox
    WHERE {among_named(f"provider_message_id IS NULL AND status IN {sql_list(WAITING)}")}
    ORDER BY rowid
    """
)
# The rows of a write that composed, and the batch each is in: which message carries each.
_CARRIED = Statement("SELECT id, batch_id FROM email_outbox WHERE id IN (SELECT value FROM json_each(:ids))")


# The step of compose_steps whose rowcount says how many batches were written.
COMPOSED = "batches_composed"


def compose_steps(rows: Iterable[tuple[str, str, str]], batchable: set[str], size: int, *, now: datetime) -> Steps:
    """The two statements that compose these rows (ID, family, environment; in the order
    written), or none: rows of a `batchable` family, `size` at a time per family and environment,
    each group one batch. Run them inside a write; the rowcount of the step named COMPOSED is how
    many batches were written, and `carried_step` reads which rows joined which.

    A group of one stays a single email, so a lone invitation costs no batch at all.
    """
    size = min(size, BATCH_LIMIT)
    if size < 2:
        return Steps()
    by_kind: dict[tuple[str, str], list[str]] = {}
    for outbox_id, family, environment in rows:
        if family in batchable:
            by_kind.setdefault((family, environment), []).append(outbox_id)
    groups = [
        {"batch": new_row_id(BATCH_ID_PREFIX), "family": family, "environment": environment, "ids": ids[i : i + size]}
        for (family, environment), ids in by_kind.items()
        for i in range(0, len(ids), size)
        if len(ids[i : i + size]) >= 2
    ]
    if not groups:
        return Steps()
    values = {"groups": json.dumps(groups), "now": clock.iso(now)}
    return Steps().add(COMPOSED, INSERT_BATCHES, values).extend([(JOIN_BATCHES, values)])


def carried_step(outbox_ids: list[str]) -> tuple[Statement, dict]:
    """The read that says, after `compose_steps` ran, which rows are there and in which batch."""
    return _CARRIED, {"ids": json_array(outbox_ids)}


def carriers(outbox_ids: list[str], batch_of: dict[str, str | None]) -> list[str]:
    """The IDs whose messages carry these rows, in order: a batch's is its first member's here,
    a row in no batch carries itself. `batch_of` holds the rows that are there (`carried_step`);
    an ID missing from it was never written and has no message."""
    published, seen = [], set()
    for outbox_id in outbox_ids:
        if outbox_id not in batch_of:
            continue
        carrier = batch_of[outbox_id] or outbox_id
        if carrier not in seen:
            seen.add(carrier)
            published.append(outbox_id)
    return published


def messages_to_publish(db: Database, outbox_ids: list[str], batchable: set[str], size: int, *, now: datetime):
    """The IDs whose messages carry these committed rows, composing those that no write composed
    (the relay's rows): rows of a `batchable` family that no attempt has reached are grouped, `size`
    at a time in creation order, into batches written now; each batch is carried by one message,
    its first member's ID. Every other row is carried by its own.

    The rows are read first and the batches written after, in one request each on a libSQL server
    (Database.read_steps, write_steps); the statements' guards decide, not the read.
    """
    if min(size, BATCH_LIMIT) < 2 or len(outbox_ids) < 2:
        return list(outbox_ids)
    (rows,) = db.read_steps([(_JOINABLE, {"ids": json_array(outbox_ids)})])
    batch_of, loose = {}, []
    for row in rows.mappings().all():
        batch_of[row["id"]] = row["batch_id"]
        if row["batch_id"] is None and row["first_attempt_at"] is None:
            loose.append((row["id"], row["family"], row["environment"]))
    steps = compose_steps(loose, batchable, size, now=now)
    if steps:
        written, (carried,) = db.write_steps_then_read(steps, [carried_step(outbox_ids)])
        if written[COMPOSED].rowcount:
            batch_of = {row.id: row.batch_id for row in carried.all()}
    # A row the read did not find (settled or taken meanwhile) still has its own message: the
    # claim decides what it finds.
    return carriers(outbox_ids, {**dict.fromkeys(outbox_ids), **batch_of})
