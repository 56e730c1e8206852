"""Composing batches at publication: which waiting rows ride together, in which order, under which key.

Publication (publish.py) hands its rows here first: rows of a batchable family that no attempt has
reached are grouped, in creation order, into batches of up to OUTBOX_BATCH_SIZE, and each batch's
row, key and members' positions are written in one write before its one message reaches the queue.
What happens to a batch after that is batches.py's (claim, seal) and batch_outcomes.py's.
"""

from __future__ import annotations

from datetime import datetime

from portal.core import clock
from portal.core.db import Database, json_array
from portal.core.driver import Statement
from portal.outbox.families import new_row_id
from portal.outbox.provider import BATCH_LIMIT
from portal.outbox.statuses import WAITING, among_named, sql_list

BATCH_ID_PREFIX = "bat"


def provider_key_of(environment: str, install_id: str, batch_id: str, composition: int) -> str:
    """The key the provider sees for one composition of a batch: unique across databases (the
    install ID) and environments, and new whenever the list changed before its first request."""
    return f"{environment}:{install_id}:{batch_id}:{composition}"


# Rows that may join a batch: waiting, never attempted, in none yet. Their creation order is the
# batch's order (rowid: one page of the table, and the order intents were written in).
_JOINABLE = Statement(
    f"""
    SELECT id, family, environment, batch_id, first_attempt_at FROM email_outbox
    WHERE {among_named(f"provider_message_id IS NULL AND status IN {sql_list(WAITING)}")}
    ORDER BY rowid
    """
)
# The rows are read first and the batches written after, in one request each on a libSQL server
# (Database.read_steps, write_steps). A batch is written only if every one of its rows may still
# join (another publication may have composed them meanwhile), and its rows join only a batch
# written: all of a group, or none of it.
_ALL_JOINABLE = f"""NOT EXISTS (
    SELECT 1 FROM json_each(:ids) AS member LEFT JOIN email_outbox o ON o.id = member.value
    WHERE o.id IS NULL OR o.batch_id IS NOT NULL OR o.first_attempt_at IS NOT NULL
       OR o.provider_message_id IS NOT NULL OR o.status NOT IN {sql_list(WAITING)})"""
_INSERT_BATCH = Statement(
    f"""
    INSERT INTO email_batches (id, family, provider_key, composition, created_at, updated_at)
    SELECT :batch, :family, :provider_key, 1, :now, :now WHERE {_ALL_JOINABLE}
    """
)
# Every member in one statement, at its place in the list (json_each's key).
_JOIN = Statement(
    f"""
    UPDATE email_outbox SET batch_id = :batch, batch_position = member.key
    FROM json_each(:ids) AS member
    WHERE email_outbox.id = member.value AND batch_id IS NULL AND first_attempt_at IS NULL
      AND provider_message_id IS NULL AND +status IN {sql_list(WAITING)}  -- by the list: see among_named
      AND EXISTS (SELECT 1 FROM email_batches WHERE id = :batch)
    """
)
_INSTALL_ID = Statement("SELECT install_id FROM portal_install WHERE id = 1")


def messages_to_publish(db: Database, outbox_ids: list[str], batchable: set[str], size: int, *, now: datetime):
    """The IDs whose messages carry these rows: rows of a `batchable` family that no attempt has
    reached are grouped, `size` at a time in creation order, into batches written now; each batch
    is carried by one message, its first member's ID. Every other row is carried by its own.

    A group of one stays a single email, so a lone invitation costs no batch at all.
    """
    size = min(size, BATCH_LIMIT)
    if size < 2 or len(outbox_ids) < 2:
        return list(outbox_ids)
    carried: dict[str, str] = {}  # row ID -> the ID of the message that carries it
    rows, install_id = db.read_steps([(_JOINABLE, {"ids": json_array(outbox_ids)}), (_INSTALL_ID, {})])
    groups: dict[tuple[str, str], list[str]] = {}
    for row in rows.mappings().all():
        if row["batch_id"] is not None:
            carried[row["id"]] = carried.setdefault(row["batch_id"], row["id"])
        elif row["family"] in batchable and row["first_attempt_at"] is None:
            groups.setdefault((row["family"], row["environment"]), []).append(row["id"])
    batches, steps = [], []
    for (family, environment), ids in groups.items():
        for start in range(0, len(ids), size):
            group = ids[start : start + size]
            if len(group) < 2:
                continue
            batch_id = new_row_id(BATCH_ID_PREFIX)
            values = {"batch": batch_id, "ids": json_array(group), "now": clock.iso(now)}
            values.update(family=family, provider_key=provider_key_of(environment, install_id.scalar(), batch_id, 1))
            batches.append(group)
            steps += [(_INSERT_BATCH, values), (_JOIN, values)]
    if steps:
        results = db.write_steps(steps)
        for group, written in zip(batches, results[::2], strict=True):
            if written.rowcount == 1:
                carried.update(dict.fromkeys(group, group[0]))
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
    (found,) = db.read_steps([(_BATCH_OF_ROW, {"id": outbox_id})])
    return found.scalar()
