"""Freezing the first attempt's message fields, so every retry sends the same bytes.

A first attempt is rendered before its claim, from the row's stored input (read with the same
eligibility the claim asks), and its payload is stored in the claim's own transaction, with the
first attempt's time: one write transaction instead of two, and the payload is committed before
any provider call. A row that an earlier attempt froze is claimed and then replayed: what is
stored is what we send (even if a later deploy changed the layout, or can no longer render its
input). `freeze_or_replay` stores a payload after the claim (INSERT OR IGNORE, then what won).
The provider's idempotency key only protects a retry that carries the same content.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from portal.core import clock
from portal.core.db import Database, json_array, json_rows
from portal.core.driver import Statement, Steps
from portal.outbox.ground.rendering import Attachment, RenderedEmail
from portal.outbox.ground.rows import CLAIM, CLAIMABLE, record_first_attempt
from portal.outbox.ground.statuses import PROCESSING
from portal.outbox.send.claims import CLAIMED, ClaimedRow, claim_values, claimed_row
from portal.outbox.write.intents import TEMPLATE_INPUT

REQUIRED_COLUMNS = frozenset(
    {
        "outbox_id",
        "from_address",
        "reply_to",
        "subject",
        "html",
        "text",
        "tags",
        "attachment_filename",
        "attachment_content",
        "attachment_content_type",
        "created_at",
        "headers",
    }
)
_verified_databases: set[str] = set()
# Stores our fields only if no attempt froze first, and only while the row is still ours to send.
_INSERT_FROZEN = """
    INSERT OR IGNORE INTO email_frozen_payloads (outbox_id, from_address, reply_to, subject,
        html, text, tags, attachment_filename, attachment_content, attachment_content_type, created_at, headers)
"""
_ONE_PAYLOAD = """
    SELECT :id, :from_address, :reply_to, :subject, :html, :text, :tags,
           :attachment_filename, :attachment_content, :attachment_content_type, :now, :headers
"""
_FREEZE = Statement(
    f"""{_INSERT_FROZEN}{_ONE_PAYLOAD}
    WHERE EXISTS (SELECT 1 FROM email_outbox WHERE id = :id AND status = '{PROCESSING}'
                  AND provider_message_id IS NULL)
    """
)
# A claimed batch's members at once (payload_of's fields, as json_rows), each under the same guard.
_FREEZE_MANY_SQL = f"""{_INSERT_FROZEN}
    SELECT p.value ->> '$.id', p.value ->> '$.from_address', p.value ->> '$.reply_to',
           p.value ->> '$.subject', p.value ->> '$.html', p.value ->> '$.text', p.value ->> '$.tags',
           p.value ->> '$.attachment_filename', p.value ->> '$.attachment_content',
           p.value ->> '$.attachment_content_type', p.value ->> '$.now', p.value ->> '$.headers'
    FROM json_each(:payloads) AS p
    WHERE EXISTS (SELECT 1 FROM email_outbox o WHERE o.id = p.value ->> '$.id' AND o.status = '{PROCESSING}'
                  AND o.provider_message_id IS NULL)
"""
_FREEZE_MANY = Statement(_FREEZE_MANY_SQL)
# In a batch's claim: only if that claim took the batch (its token), since the rows are processing
# under another delivery's claim when it did not.
_FREEZE_MANY_IF_CLAIMED = Statement(
    _FREEZE_MANY_SQL + " AND EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.claim_token = :token)"
)
_READ_FROZEN = Statement("SELECT * FROM email_frozen_payloads WHERE outbox_id = :id")
_READ_FROZEN_MANY = Statement(
    "SELECT * FROM email_frozen_payloads WHERE outbox_id IN (SELECT value FROM json_each(:ids))"
)
# In the claim's transaction, just after it: stores our payload only if that claim took the row and
# recorded our first attempt (its time and the claim's expiry are this attempt's own), so the three
# statements need no answer in between and go to a libSQL server as one request.
_FREEZE_CLAIMED = Statement(
    f"""{_INSERT_FROZEN}{_ONE_PAYLOAD}
    WHERE EXISTS (SELECT 1 FROM email_outbox WHERE id = :id AND status = '{PROCESSING}'
                  AND first_attempt_at = :now AND claim_expires_at = :claim_expires_at
                  AND provider_message_id IS NULL)
    """
)
# The input of a row a claim would take now and no attempt has reached: what to render first.
FIRST_ATTEMPT_INPUT = Statement(
    f"SELECT {TEMPLATE_INPUT} FROM email_outbox WHERE id = :id AND first_attempt_at IS NULL AND {CLAIMABLE}"
)


class FreezeError(RuntimeError):
    """The payload cannot be frozen or replayed safely; nothing may be sent on this attempt."""


def ensure_store_available(db: Database) -> None:
    """Once per process and database: the store has every column the reader needs."""
    if db.url in _verified_databases:
        return
    with db.read() as conn:
        columns = {row[1] for row in conn.exec_driver_sql("PRAGMA table_info(email_frozen_payloads)")}
    missing = REQUIRED_COLUMNS - columns
    if missing:
        raise FreezeError(f"frozen payload store lacks columns: {sorted(missing)}")
    _verified_databases.add(db.url)


def replay_frozen(db: Database, outbox_id: str) -> RenderedEmail | None:
    """The payload an earlier attempt froze, validated, or None: a retry sends it without rendering,
    so a deploy that can no longer render the row's stored input does not stop its replay."""
    with db.read() as conn:
        stored = _READ_FROZEN(conn, {"id": outbox_id}).mappings().first()
    return None if stored is None else _validated(stored)


def claim_and_freeze(
    db: Database,
    outbox_id: str,
    payload: dict | None,
    *,
    claim_seconds: int,
    republish_after_seconds: int,
    max_attempts: int,
    now: datetime,
) -> tuple[ClaimedRow | None, RenderedEmail | None]:
    """Claim the row and, for a first attempt that may be sent (not suppressed, attempts left),
    store `payload` (from `payload_of`) as its frozen payload in the same transaction.

    Returns the claim (None: not claimable) and the message to send when this call froze it;
    None for the message means: a row an earlier attempt froze (replay it), one that must not be
    sent, or no payload given.
    """
    if payload is not None:
        ensure_store_available(db)
    frozen_at = payload["now"] if payload is not None else None
    values = claim_values(
        outbox_id,
        claim_seconds,
        republish_after_seconds,
        now=now,
        first_attempt_at=frozen_at,
        max_attempts=max_attempts,
    )
    steps = Steps().add("claim", CLAIM, values)
    if payload is not None:
        steps.add("froze", _FREEZE_CLAIMED, {**payload, "claim_expires_at": values["claim_expires_at"]})
    written = db.write_steps(steps.add("claimed", CLAIMED, values))
    row = claimed_row(written["claim"], written["claimed"])
    # The claim recorded our first attempt only for a row that may be sent and had none: an
    # earlier attempt's time is an earlier instant than this one's.
    if row is None or frozen_at is None or row.first_attempt_at != frozen_at:
        return row, None
    if written["froze"].rowcount == 1:
        return row, _validated(payload)
    # A payload without a first attempt is none of ours: what is stored is what is sent (the
    # first stored payload never changes, so reading it after the commit reads the same).
    return row, replay_frozen(db, outbox_id)


def payload_of(outbox_id: str, rendered: RenderedEmail, *, now: datetime) -> dict:
    """The payload's columns (with the row's ID and `now`, the first attempt's time) as the
    freezing statements bind them; FreezeError if it could not be stored or sent whole."""
    if len(rendered.attachments) > 1:
        raise FreezeError("the frozen payload store holds one attachment; this email has more")
    attachment = rendered.attachments[0] if rendered.attachments else None
    payload = {
        "id": outbox_id,
        "from_address": rendered.from_address,
        "reply_to": rendered.reply_to,
        "subject": rendered.subject,
        "html": rendered.html,
        "text": rendered.text,
        "tags": json.dumps([list(tag) for tag in rendered.tags]),
        "attachment_filename": attachment.filename if attachment else None,
        "attachment_content": attachment.content_b64 if attachment else None,
        "attachment_content_type": attachment.content_type if attachment else None,
        "now": clock.iso(now),
        # NULL: no extra headers (every family but campaigns).
        "headers": json.dumps([list(header) for header in rendered.headers]) if rendered.headers else None,
    }
    _validated(payload)
    return payload


def freeze_or_replay(db: Database, outbox_id: str, rendered: RenderedEmail, *, now: datetime) -> RenderedEmail | None:
    """The message to send: the first stored payload, or ours once stored (first attempted at `now`).

    None when the row is no longer ours to send (it settled while we rendered).
    """
    payload = payload_of(outbox_id, rendered, now=now)
    ensure_store_available(db)
    with db.write() as conn:
        _FREEZE(conn, payload)
        stored = _READ_FROZEN(conn, {"id": outbox_id}).mappings().first()
        if stored is None:
            return None
        record_first_attempt(conn, outbox_id, now=now)
    return _validated(stored)


def _validated(stored) -> RenderedEmail:
    """Never send a partial payload: every required field must be present and well-formed."""
    for column in ("from_address", "subject", "html", "text", "tags"):
        if not stored[column]:
            raise FreezeError(f"frozen payload has no {column}")
    try:
        tags = tuple((str(name), str(value)) for name, value in json.loads(stored["tags"]))
    except (ValueError, TypeError) as error:
        raise FreezeError("frozen payload tags are unreadable") from error
    attachment_fields = (stored["attachment_filename"], stored["attachment_content"], stored["attachment_content_type"])
    if any(attachment_fields) and not all(attachment_fields):
        raise FreezeError("frozen payload has a partial attachment")
    attachments = (Attachment(*attachment_fields),) if all(attachment_fields) else ()
    try:
        # NULL: a payload frozen without extra headers (every family but campaigns).
        headers = tuple((str(name), str(value)) for name, value in json.loads(stored["headers"] or "[]"))
    except (ValueError, TypeError) as error:
        raise FreezeError("frozen payload headers are unreadable") from error
    return RenderedEmail(
        from_address=stored["from_address"],
        reply_to=stored["reply_to"],
        subject=stored["subject"],
        html=stored["html"],
        text=stored["text"],
        tags=tags,
        attachments=attachments,
        headers=headers,
    )


def freeze_steps(payloads: Sequence[dict], *, claim: dict | None = None) -> list:
    """The step that stores first-attempt payloads of a claimed batch's members (from `payload_of`)
    inside the caller's write (the seal's): the same guarded INSERT OR IGNORE as a single row's, so a
    payload already stored stays, and a member no longer ours to send stores nothing. With `claim`
    (the batch and the claim's token), inside the claim's own write: only if that claim took it."""
    if not payloads:
        return []
    if claim is None:
        return [(_FREEZE_MANY, {"payloads": json_rows(payloads)})]
    return [
        (_FREEZE_MANY_IF_CLAIMED, {"payloads": json_rows(payloads), "batch": claim["batch"], "token": claim["token"]})
    ]


def stored_rows(payloads: Sequence[dict]) -> list[dict]:
    """The rows of email_frozen_payloads that freeze_steps stores for these payloads (from
    `payload_of`), as a read of the table returns them: for a caller that knows each was stored."""
    return [
        {column: payload[column] for column in REQUIRED_COLUMNS - {"outbox_id", "created_at"}}
        | {"outbox_id": payload["id"], "created_at": payload["now"]}
        for payload in payloads
    ]


def validated_by_row(stored) -> dict[str, RenderedEmail]:
    """Stored payloads (rows of email_frozen_payloads), validated, by row ID."""
    return {row["outbox_id"]: _validated(row) for row in stored}


def frozen_messages(db: Database, outbox_ids: list[str]) -> dict[str, RenderedEmail]:
    """The stored payloads of these rows, validated, by row ID (a row without one is absent)."""
    (stored,) = db.read_steps([(_READ_FROZEN_MANY, {"ids": json_array(outbox_ids)})])
    return validated_by_row(stored.mappings().all())
