"""Fixtures for attendance tests: posts signed under Standard Webhooks header names (tests.builders.sign)."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from tests.builders import sign as sign_message


def sign(secret: str, body: str, webhook_id: str | None = None, timestamp: datetime | None = None) -> dict:
    return sign_message(secret, body, webhook_id, timestamp, prefix="webhook")


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
