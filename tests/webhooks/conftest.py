"""Fixtures for the receipt endpoint's tests: signed posts through the app, and the app served over HTTP."""

from __future__ import annotations

import json
import threading

import pytest
from werkzeug.serving import make_server

from tests.builders import sign


@pytest.fixture
def post_receipt(client, settings):
    """post_receipt(event_dict_or_raw_text, event_id=None, ...) -> the portal's response."""

    def post(payload, event_id=None, timestamp=None, secret=None):
        body = payload if isinstance(payload, str) else json.dumps(payload)
        signed = sign(secret or settings.resend_webhook_secret, body, event_id, timestamp)
        return client.post("/webhooks/resend", data=body.encode(), headers=signed)

    return post


@pytest.fixture
def live_portal(app):
    """The app served over real HTTP on a free loopback port, for the provider model to call."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-portal", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join()
