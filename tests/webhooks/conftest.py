"""Fixtures for the receipt endpoint's tests: signed posts through the app, and the app served over HTTP."""

from __future__ import annotations

import json

import pytest

from tests.builders import sign


@pytest.fixture
def post_receipt(client, settings):
    """post_receipt(event_dict_or_raw_text, event_id=None, ...) -> the portal's response."""

    def post(payload, event_id=None, timestamp=None, secret=None):
        body = payload if isinstance(payload, str) else json.dumps(payload)
        signed = sign(secret or settings.resend_webhook_secret, body, event_id, timestamp)
        return client.post("/webhooks/resend", data=body.encode(), headers=signed)

    return post
