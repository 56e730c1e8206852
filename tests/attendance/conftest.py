"""Fixtures for attendance tests: signed posts built with the real standardwebhooks library."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from standardwebhooks.webhooks import Webhook


def sign(secret: str, body: str, webhook_id: str | None = None, timestamp: datetime | None = None) -> dict:
    webhook_id = webhook_id or f"msg_{uuid.uuid4().hex}"
    timestamp = timestamp or datetime.now(UTC)
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": Webhook(secret).sign(webhook_id, timestamp, body),
        "content-type": "application/json",
    }


def session(number: int = 1, **fields) -> dict:
    """One session as a platform sends it; fields override."""
    return {
        "session_id": f"lang-{number}",
        "volunteer_email": "heidi@acme.example",
        "held_at": "2026-11-03T17:00:00Z",
        "minutes": 60,
        "status": "attended",
        "updated_at": "2026-11-03T18:05:00Z",
        **fields,
    }


@pytest.fixture
def post_attendance(client, settings):
    """post_attendance(sessions_or_raw_body, platform="language", webhook_id=None, ...) -> response."""

    def post(sessions, platform="language", webhook_id=None, timestamp=None, secret=None):
        if isinstance(sessions, (str, bytes)):
            body = sessions if isinstance(sessions, str) else sessions.decode()
        else:
            body = json.dumps({"platform": platform, "sessions": sessions})
        headers = sign(secret or settings.attendance_webhook_secret, body, webhook_id, timestamp)
        return client.post("/api/attendance", data=body.encode(), headers=headers)

    return post


@pytest.fixture
def user_id(db):
    def find(email):
        with db.read() as conn:
            return conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar_one()

    return find
