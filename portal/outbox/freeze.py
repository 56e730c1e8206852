"""Freezing the first attempt's message fields, so every retry sends the same bytes.

Called after the claim and the suppression check, immediately before the provider call. If a
payload is stored for the row, that is what we send (even if a later deploy changed the layout);
otherwise we store ours with INSERT OR IGNORE, read back what won, validate it and send that.
The provider's idempotency key only protects a retry that carries the same content.
"""

from __future__ import annotations

import json

from portal.db import Database, Statement
from portal.outbox import clock
from portal.outbox.rendering import Attachment, RenderedEmail
from portal.outbox.rows import record_first_attempt
from portal.outbox.statuses import PROCESSING

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
_FREEZE = Statement(
    f"""
    INSERT OR IGNORE INTO email_frozen_payloads (outbox_id, from_address, reply_to, subject,
        html, text, tags, attachment_filename, attachment_content, attachment_content_type, created_at, headers)
    SELECT :id, :from_address, :reply_to, :subject, :html, :text, :tags, :a_name, :a_content, :a_type, :now,
        :headers
    WHERE EXISTS (SELECT 1 FROM email_outbox WHERE id = :id AND status = '{PROCESSING}'
                  AND provider_message_id IS NULL)
    """
)
_READ_FROZEN = Statement("SELECT * FROM email_frozen_payloads WHERE outbox_id = :id")


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


def freeze_or_replay(db: Database, outbox_id: str, rendered: RenderedEmail) -> RenderedEmail | None:
    """The message to send: the first stored payload, or ours once stored.

    None when the row is no longer ours to send (it settled while we rendered).
    """
    if len(rendered.attachments) > 1:
        raise FreezeError("the frozen payload store holds one attachment; this email has more")
    ensure_store_available(db)
    attachment = rendered.attachments[0] if rendered.attachments else None
    with db.write() as conn:
        _FREEZE(
            conn,
            {
                "id": outbox_id,
                "from_address": rendered.from_address,
                "reply_to": rendered.reply_to,
                "subject": rendered.subject,
                "html": rendered.html,
                "text": rendered.text,
                "tags": json.dumps([list(tag) for tag in rendered.tags]),
                "a_name": attachment.filename if attachment else None,
                "a_content": attachment.content_b64 if attachment else None,
                "a_type": attachment.content_type if attachment else None,
                "now": clock.now_iso(),
                "headers": json.dumps([list(header) for header in rendered.headers]) if rendered.headers else None,
            },
        )
        stored = _READ_FROZEN(conn, {"id": outbox_id}).mappings().first()
        if stored is None:
            return None
        record_first_attempt(conn, outbox_id)
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
