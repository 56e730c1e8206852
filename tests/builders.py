"""Receipt builders shared by the receipt tests (tests/outbox) and the endpoint tests (tests/webhooks):
Resend's payload shape, signed as Svix signs it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from svix.webhooks import Webhook

T0 = datetime(2026, 10, 15, 9, 30, tzinfo=UTC)


def at(seconds: float = 0) -> str:
    """Resend's timestamp format, `seconds` after a fixed moment."""
    return (T0 + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def sign(
    secret: str, body: str, message_id: str | None = None, timestamp: datetime | None = None, *, prefix: str = "svix"
) -> dict:
    """Signed headers as a sender sets them: Resend signs with Svix's names ("svix-id", ...), the
    programme platforms with Standard Webhooks' ("webhook-id", ...); the signature is the same."""
    message_id = message_id or f"msg_{uuid.uuid4().hex}"
    timestamp = timestamp or datetime.now(UTC)
    return {
        f"{prefix}-id": message_id,
        f"{prefix}-timestamp": str(int(timestamp.timestamp())),
        f"{prefix}-signature": Webhook(secret).sign(message_id, timestamp, body),
        "content-type": "application/json",
    }


def event(
    type="email.delivered",
    email_id="re_msg_1",
    to="ada@example.com",
    created_at=None,
    environment="development",
    outbox_id=None,
    tags=None,
    **data,
) -> dict:
    """A Resend webhook payload; `tags` replaces the environment/family/outbox_id tags outright."""
    if tags is None:
        tags = {"environment": environment, "family": "invitation"}
        if outbox_id:
            tags["outbox_id"] = outbox_id
    return {
        "type": type,
        "created_at": created_at or at(0),
        "data": {
            "email_id": email_id,
            "from": "Partner Portal <portal@localhost>",
            "to": [to],
            "subject": "You are invited",
            "created_at": at(-1),
            "tags": tags,
            **data,
        },
    }
