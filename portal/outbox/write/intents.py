"""Adding email intents to the outbox inside the caller's own transaction.

Areas do not call this directly: `write_then_publish` (unit_of_work.py) hands them a connection
and adds their intents on it, so the domain change and the email intent commit together or not
at all; `write_steps_then_publish` adds them as steps of a write given whole (`outbox_row_steps`).
Replaying the same intent (same idempotency key) creates no second row. Publication happens
after the commit.

A write that publishes its rows right after its commit (`publishing`: unit_of_work's, the only
one) writes them `enqueued`, their stale period starting at the commit: a successful publication
then costs no write of its own, and only a failed one is recorded (`pending`, with the reason,
due for the relay's next pass). Should the process die between the commit and the publication,
the relay finds the rows a stale period later, as it finds a message Redis lost.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import json_array, json_rows
from portal.core.driver import Statement
from portal.core.settings import Settings
from portal.outbox.ground.erased import RESTORE_SUPPRESSIONS, address_hash, restore_erased_suppressions
from portal.outbox.ground.families import Family
from portal.outbox.ground.rendering import LAYOUT_VERSION
from portal.outbox.ground.rows import ALWAYS_DUE, INSERT_ROWS, INSERT_ROWS_FROM
from portal.outbox.ground.statuses import ENQUEUED, PENDING


@dataclass(frozen=True)
class EmailIntent:
    family: Family
    recipient: str
    # Stable for the domain event: a replay must build the same key. None only with `match`.
    idempotency_key: str | None
    data: dict = field(default_factory=dict)  # the template input; stored on the row as JSON
    subject_ref: str | None = None
    # Template input many rows of one write share (a campaign's body): stored once, and the row's own
    # `data` is patched onto it when the row is rendered (TEMPLATE_INPUT).
    shared: dict | None = None
    # For a write given whole (`outbox_row_steps` with `WrittenWith`): the value by which the domain
    # row this email is about is found, once the same write has written it.
    match: str | None = None


# A row's whole template input, as every reader that renders it must read it.
TEMPLATE_INPUT = """CASE WHEN email_outbox.shared_input_id IS NULL THEN email_outbox.template_input
    ELSE json_patch((SELECT s.data FROM email_shared_inputs s WHERE s.id = email_outbox.shared_input_id),
                    email_outbox.template_input) END"""


class WrittenWith:
    """Intents about domain rows that the same write given whole writes first, whose IDs are not
    known before it runs (an invitation opened by `invite_colleagues`). `source` is a SELECT of the
    area's own table with the columns `match`, `idempotency_key`, `subject_ref` and `patch`: an
    intent's row is written only if the source has a row for its `match`, and takes that row's key
    and subject_ref, and its data patched with `patch` (JSON, or NULL for none).

    Made once per source (a module constant of the area's): it holds the prepared statement."""

    def __init__(self, source: str):
        self.insert = Statement(
            INSERT_ROWS_FROM.format(
                key="s.idempotency_key",
                data="CASE WHEN s.patch IS NULL THEN r.value ->> '$.data' ELSE json_patch(r.value ->> '$.data', s.patch) END",
                subject_ref="s.subject_ref",
                join=f"JOIN ({source}) AS s ON s.match = r.value ->> '$.match'",
            )
        )


_INSERT_SHARED = Statement(
    "INSERT OR IGNORE INTO email_shared_inputs (id, data, created_at) "
    "SELECT s.value ->> '$.id', s.value ->> '$.data', s.value ->> '$.now' FROM json_each(:shared) AS s"
)

_IDS_BY_KEY = sa.text(
    "SELECT idempotency_key, id FROM email_outbox WHERE idempotency_key IN (SELECT value FROM json_each(:keys))"
)


def add_outbox_rows(
    conn: sa.Connection, intents: list[EmailIntent], settings: Settings, *, now: datetime, publishing: bool = False
) -> list[str]:
    """Insert one row per intent (ON CONFLICT DO NOTHING), created at `now`; return the row IDs,
    existing or new, in order. `publishing`: see the module's docstring."""
    return write_outbox_rows(conn, intents, settings, now=now, publishing=publishing).ids


@dataclass(frozen=True)
class AddedRows:
    ids: list[str]  # each intent's row, in order: a replayed key's is the row written first
    written: frozenset[str]  # the rows this write wrote


def write_outbox_rows(
    conn: sa.Connection, intents: list[EmailIntent], settings: Settings, *, now: datetime, publishing: bool
) -> AddedRows:
    """`add_outbox_rows`, saying which of the rows it wrote (and which a replayed key kept)."""
    if not intents:
        return AddedRows([], frozenset())
    rows, shared = _rows(intents, settings, now, publishing)
    if shared:
        _INSERT_SHARED(conn, {"shared": json.dumps(shared)})
    restore_erased_suppressions(conn, [row["recipient"] for row in rows], settings.secret_key)
    INSERT_ROWS(conn, {"rows": json_rows(rows)})
    # A replayed intent kept its first row: read every ID back by key.
    ids_by_key = dict(conn.execute(_IDS_BY_KEY, {"keys": json_array(row["key"] for row in rows)}).all())
    ids = [ids_by_key[row["key"]] for row in rows]
    return AddedRows(ids, frozenset(row["id"] for row in rows if ids_by_key[row["key"]] == row["id"]))


def outbox_row_steps(
    intents: list[EmailIntent],
    settings: Settings,
    *,
    now: datetime,
    written_with: WrittenWith | None = None,
    publishing: bool = False,
) -> tuple[list[tuple[Statement, dict]], list[str]]:
    """`add_outbox_rows` as steps of a write given whole (Database.write_steps: one request on a
    libSQL server), and the IDs of the rows they write, in order. An ID names no row when its
    intent's key was written before (the first row stays) or, with `written_with`, when the source
    had no row for its `match`: read which are there after the steps (unit_of_work does)."""
    if not intents:
        return [], []
    rows, shared = _rows(intents, settings, now, publishing)
    pairs = json.dumps([[r, address_hash(r, settings.secret_key)] for r in {row["recipient"] for row in rows}])
    steps = [(_INSERT_SHARED, {"shared": json.dumps(shared)})] if shared else []
    steps.append((RESTORE_SUPPRESSIONS, {"pairs": pairs}))
    steps.append((written_with.insert if written_with else INSERT_ROWS, {"rows": json_rows(rows)}))
    return steps, [row["id"] for row in rows]


def _rows(
    intents: list[EmailIntent], settings: Settings, now: datetime, publishing: bool
) -> tuple[list[dict], list[dict]]:
    """Each intent's row as the insert reads it, and the shared inputs they name (each once)."""
    rows, shared, shared_ids, stamp = [], {}, {}, clock.iso(now)
    for intent in intents:
        family = intent.family
        shared_id = None
        if intent.shared is not None:
            # A campaign hands every recipient's intent the same dict: serialised once per call.
            shared_id = shared_ids.get(id(intent.shared))
            if shared_id is None:
                data = json.dumps(intent.shared, sort_keys=True)
                shared_id = "shr_" + hashlib.sha256(data.encode()).hexdigest()[:32]
                shared_ids[id(intent.shared)] = shared_id
                shared[shared_id] = {"id": shared_id, "data": data, "now": stamp}
        rows.append(
            {
                "id": family.new_outbox_id(),
                "family": family.name,
                "recipient": intent.recipient.strip().lower(),
                "key": intent.idempotency_key,
                "match": intent.match,
                "status": ENQUEUED if publishing else PENDING,
                "template": family.template,
                "template_version": family.template_version,
                "layout_version": LAYOUT_VERSION,
                "data": json.dumps(intent.data, sort_keys=True),
                "environment": settings.portal_env,
                "subject_ref": intent.subject_ref,
                "shared_input_id": shared_id,
                "relay_since": stamp if publishing else ALWAYS_DUE,
                "enqueued_at": stamp if publishing else None,
                "now": stamp,
            }
        )
    return rows, list(shared.values())
