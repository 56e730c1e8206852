"""The operator's view of the outbox: rows by family and status, and a filtered list that pages by
key, so any page of a million rows is one index range (migration 0016 holds the indexes).

A page is `created_at, id` descending from a cursor (the last row of the page before), never an
OFFSET: an offset reads and drops every row before it, and rows added meanwhile shift the pages.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

import sqlalchemy as sa

from portal.core.db import Database, json_array
from portal.outbox.ground.statuses import ALL
from portal.outbox.operate import reads

PER_PAGE = 50
# The columns a list shows: never the template input.
_COLUMNS = (
    "id, family, recipient, status, attempt_count, last_error, outcome_unknown, provider_message_id, "
    "first_attempt_at, created_at, updated_at"
)


@dataclass(frozen=True)
class OutboxFilter:
    """What the operator narrowed the list to; empty strings mean "any"."""

    status: str = ""
    family: str = ""
    recipient: str = ""  # the start of the address (lower case), so the recipient index answers
    created_from: str = ""  # fixed-width UTC ISO, inclusive
    created_before: str = ""  # fixed-width UTC ISO, exclusive

    def __post_init__(self):
        if self.status and self.status not in ALL:
            raise ValueError("unknown status")

    def where(self) -> tuple[str, dict]:
        clauses, params = [], {}
        if self.status:
            clauses.append("status = :status")
            params["status"] = self.status
        if self.family:
            clauses.append("family = :family")
            params["family"] = self.family
        if self.recipient:
            # A prefix as a range: the recipient index answers it, where LIKE would scan.
            clauses.append("recipient >= :recipient_low AND recipient < :recipient_high")
            params["recipient_low"] = self.recipient
            params["recipient_high"] = self.recipient + "\U0010ffff"
        if self.created_from:
            clauses.append("created_at >= :created_from")
            params["created_from"] = self.created_from
        if self.created_before:
            clauses.append("created_at < :created_before")
            params["created_before"] = self.created_before
        return (" AND ".join(clauses) or "1 = 1"), params


@dataclass(frozen=True)
class OutboxPage:
    rows: list[dict]
    next_cursor: str | None  # None on the last page


def encode_cursor(row: dict) -> str:
    return base64.urlsafe_b64encode(f"{row['created_at']}|{row['id']}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> tuple[str, str] | None:
    """(created_at, id) of the last row of the page before; None for the first page or a bad cursor."""
    if not cursor or len(cursor) > 200:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, ValueError):
        return None
    created_at, separator, outbox_id = text.partition("|")
    return (created_at, outbox_id) if separator and created_at and outbox_id else None


def page_query(where: str, keyset: bool) -> str:
    after = " AND (created_at, id) < (:cursor_at, :cursor_id)" if keyset else ""
    return f"SELECT {_COLUMNS} FROM email_outbox WHERE {where}{after} ORDER BY created_at DESC, id DESC LIMIT :limit"


def outbox_page(db: Database, filters: OutboxFilter, cursor: str | None, per_page: int = PER_PAGE) -> OutboxPage:
    where, params = filters.where()
    position = decode_cursor(cursor)
    if position is not None:
        params.update(cursor_at=position[0], cursor_id=position[1])
    with db.read() as conn:
        rows = [
            dict(row)
            for row in conn.execute(
                sa.text(page_query(where, position is not None)), {**params, "limit": per_page + 1}
            ).mappings()
        ]
    more = len(rows) > per_page
    rows = rows[:per_page]
    return OutboxPage(rows=rows, next_cursor=encode_cursor(rows[-1]) if more else None)


def matching_ids(conn: sa.Connection, filters: OutboxFilter, condition: str, limit: int) -> list[str]:
    """The newest `limit` IDs that match the filters and `condition` (an action's ELIGIBLE rule)."""
    where, params = filters.where()
    return list(
        conn.execute(
            sa.text(
                f"SELECT id FROM email_outbox WHERE {where} AND {condition} ORDER BY created_at DESC, id DESC LIMIT :limit"
            ),
            {**params, "limit": limit},
        ).scalars()
    )


def count_matching(db: Database, filters: OutboxFilter, condition: str, limit: int) -> int:
    """How many rows (at most `limit`) match the filters and the condition."""
    with db.read() as conn:
        return len(matching_ids(conn, filters, condition, limit))


def family_status_counts(db: Database) -> dict[str, dict[str, int]]:
    """{family: {status: rows}} for the grid at the top of the console."""
    with db.read() as conn:
        pairs = reads.family_status_counts(conn)
    counts: dict[str, dict[str, int]] = {}
    for (family, status), number in pairs.items():
        counts.setdefault(family, {})[status] = number
    return counts


def outbox_row(db: Database, outbox_id: str) -> dict | None:
    """One row as the console shows it (with its key and subject reference; never its content), and
    the batch it rode in: `batch` (BatchFacts or None), `batch_requests`, and
    `in_sealed_batch` (its list is frozen: the row follows the batch's answer)."""
    with db.read() as conn:
        row = (
            conn.execute(
                sa.text(
                    f"SELECT {_COLUMNS}, idempotency_key, provider_key, subject_ref, next_attempt_at, "
                    "claim_expires_at, sent_at, last_event_at, enqueued_at, template, "
                    "template_input = '{}' AS content_erased FROM email_outbox WHERE id = :id"
                ),
                {"id": outbox_id},
            )
            .mappings()
            .first()
        )
        if row is None:
            return None
        batch = batch_facts(conn, outbox_id)
        requests = batch_requests(conn, batch.id) if batch else []
        email = frozen_email(conn, outbox_id)
    sealed = batch is not None and batch.sealed_at is not None and batch.settled_at is None
    return {**row, "batch": batch, "batch_requests": requests, "in_sealed_batch": sealed, "email": email}


# --- the email itself, while its frozen payload is kept --------------------------------------------


@dataclass(frozen=True)
class FrozenEmail:
    """The email as its first attempt froze it: what every attempt sends. Kept until the provider
    accepts it (or its batch settles), so a sent email's content is no longer here."""

    from_address: str
    reply_to: str | None
    subject: str
    html: str
    text: str
    tags: list[tuple[str, str]]
    attachment_filename: str | None
    frozen_at: str


_FROZEN = sa.text(
    """
    SELECT from_address, reply_to, subject, html, text, tags, attachment_filename, created_at AS frozen_at
    FROM email_frozen_payloads WHERE outbox_id = :id
    """
)


def frozen_email(conn: sa.Connection, outbox_id: str) -> FrozenEmail | None:
    row = conn.execute(_FROZEN, {"id": outbox_id}).mappings().first()
    if row is None:
        return None
    tags = [(str(name), str(value)) for name, value in json.loads(row["tags"])]  # as freeze.py stores them
    return FrozenEmail(**{**row, "tags": tags})


def frozen_email_of(db: Database, outbox_id: str) -> FrozenEmail | None:
    with db.read() as conn:
        return frozen_email(conn, outbox_id)


_SUBJECTS = sa.text(
    """
    SELECT o.id, f.subject, o.subject_ref FROM email_outbox o
    LEFT JOIN email_frozen_payloads f ON f.outbox_id = o.id
    WHERE o.id IN (SELECT value FROM json_each(:ids))
    """
)


def subjects_of(db: Database, outbox_ids: list[str]) -> dict[str, tuple[str | None, str | None]]:
    """For a list's page, each email's subject (while its frozen payload is kept: not before its
    first attempt, nor once sent) and its subject reference (what the email is about): one read by
    primary key, never the content."""
    if not outbox_ids:
        return {}
    with db.read() as conn:
        rows = conn.execute(_SUBJECTS, {"ids": json_array(outbox_ids)})
        return {row.id: (row.subject, row.subject_ref) for row in rows}


# --- the batch a row rode in ----------------------------------------------------------------------


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
