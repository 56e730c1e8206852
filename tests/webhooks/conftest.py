"""Fixtures for receipt tests: outbox rows inserted with plain SQL, signed posts, a live portal."""
from __future__ import annotations

import itertools
import json
import threading

import pytest
import sqlalchemy as sa
from werkzeug.serving import make_server

from portal.outbox import clock
from portal.outbox.statuses import SENT
from tests.webhooks.builders import sign


@pytest.fixture
def post_receipt(client, settings):
    """post_receipt(event_dict_or_raw_text, event_id=None, ...) -> the portal's response."""

    def post(payload, event_id=None, timestamp=None, secret=None):
        body = payload if isinstance(payload, str) else json.dumps(payload)
        signed = sign(secret or settings.resend_webhook_secret, body, event_id, timestamp)
        return client.post("/webhooks/resend", data=body.encode(), headers=signed)

    return post


@pytest.fixture
def make_outbox_row(db):
    """make_outbox_row(status=..., provider_message_id=..., **columns) inserts a row; returns its ID."""
    counter = itertools.count(1)

    def make(status=SENT, provider_message_id="re_msg_1", recipient="ada@example.com", **columns):
        number = next(counter)
        now = clock.now_iso()
        row = {
            "id": f"inv_{number:032x}", "family": "invitation", "recipient": recipient,
            "idempotency_key": f"invitation/{number}", "provider_message_id": provider_message_id,
            "status": status, "template": "invitation", "template_version": 1, "layout_version": 1,
            "template_input": "{}", "environment": "development", "created_at": now, "updated_at": now,
            **columns,
        }
        names = ", ".join(row)
        with db.write() as conn:
            conn.execute(sa.text(f"INSERT INTO email_outbox ({names}) VALUES ({', '.join(':' + n for n in row)})"), row)
        return row["id"]

    return make


@pytest.fixture
def outbox_row(db):
    def read(outbox_id):
        with db.read() as conn:
            return conn.execute(sa.text("SELECT * FROM email_outbox WHERE id = :id"), {"id": outbox_id}).mappings().one()

    return read


@pytest.fixture
def count_rows(db):
    def count(table, where="1"):
        with db.read() as conn:
            return conn.execute(sa.text(f"SELECT COUNT(*) FROM {table} WHERE {where}")).scalar()

    return count


@pytest.fixture
def live_portal(app):
    """The app served over real HTTP on a free loopback port, for the provider model to call."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-portal", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join()
