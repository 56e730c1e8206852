"""The provider model's receipts: Resend's webhook events, Svix-signed, posted over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
import resend
from svix.webhooks import Webhook

from devtools.processes import free_port
from devtools.provider_model import ProviderModel

SECRET = "whsec_dGVzdC13ZWJob29rLXNlY3JldC1mb3ItdGhlLW1vZGVs"


class Receiver:
    """A webhook endpoint that records what it is sent and answers with the statuses queued in `answers`."""

    def __init__(self):
        self.received: list[dict] = []
        self.answers: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                status = receiver.answers.pop(0) if receiver.answers else 204
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def events(self) -> list[dict]:
        return [json.loads(r["body"]) for r in self.received]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


@pytest.fixture
def hooked_model(receiver):
    provider = ProviderModel(port=0, webhook_url=receiver.url, webhook_secret=SECRET).start()
    saved = resend.api_key, resend.api_url
    resend.api_key, resend.api_url = "re_test", provider.url
    yield provider
    resend.api_key, resend.api_url = saved
    provider.stop()


def send(message, to="ada@example.com"):
    return resend.Emails.send(message(to=[to]))["id"]


def test_each_sent_email_gets_signed_sent_then_delivered(hooked_model, receiver, message):
    email_id = send(message)
    hooked_model.wait_for_receipts()

    assert [e["type"] for e in receiver.events()] == ["email.sent", "email.delivered"]
    for request in receiver.received:
        # The svix package (what the portal uses) accepts the model's own signature.
        Webhook(SECRET).verify(request["body"], request["headers"])
        assert request["headers"]["content-type"] == "application/json"
    sent, delivered = receiver.events()
    assert sent["data"]["email_id"] == delivered["data"]["email_id"] == email_id
    assert sent["data"]["to"] == ["ada@example.com"]
    assert sent["data"]["tags"] == {"environment": "test", "family": "invitation"}, "tags are an object in webhooks"
    assert sent["created_at"] < delivered["created_at"]
    assert sent["created_at"].endswith("Z")
    assert len({r["headers"]["svix-id"] for r in receiver.received}) == 2


def test_bounce_address_gets_a_permanent_bounce_instead_of_delivered(hooked_model, receiver, message):
    send(message, to="Some One <bounce.test@example.com>")
    hooked_model.wait_for_receipts()
    sent, bounced, suppressed = receiver.events()
    assert (sent["type"], bounced["type"]) == ("email.sent", "email.bounced")
    assert bounced["data"]["bounce"]["type"] == "Permanent"
    # As Resend does: a hard bounce puts the address on the team's suppression list, and says so.
    assert suppressed["type"] == "suppression.added"
    assert (suppressed["data"]["email"], suppressed["data"]["origin"]) == ("bounce.test@example.com", "bounce")
    assert [entry["email"] for entry in hooked_model.suppressions()] == ["bounce.test@example.com"]


def test_complain_address_gets_delivered_then_complained(hooked_model, receiver, message):
    send(message, to="complainer@example.com")
    hooked_model.wait_for_receipts()
    assert [e["type"] for e in receiver.events()] == [
        "email.sent",
        "email.delivered",
        "email.complained",
        "suppression.added",
    ]


def test_idempotent_replay_sends_no_second_receipts(hooked_model, receiver, message):
    resend.Emails.send(message(), {"idempotency_key": "k"})
    resend.Emails.send(message(), {"idempotency_key": "k"})
    hooked_model.wait_for_receipts()
    assert len(receiver.received) == 2


def test_receipts_are_inspectable(hooked_model, message):
    email_id = send(message)
    hooked_model.wait_for_receipts()
    receipts = hooked_model.receipts()
    assert [(r["type"], r["email_id"], r["state"], r["attempts"], r["last_status"]) for r in receipts] == [
        ("email.sent", email_id, "delivered", 1, 204),
        ("email.delivered", email_id, "delivered", 1, 204),
    ]
    assert all(r["id"].startswith("msg_") for r in receipts)
    assert requests.get(f"{hooked_model.url}/_model/receipts").json() == receipts
    assert "email.delivered: delivered" in requests.get(f"{hooked_model.url}/view/{email_id}").text


def test_failed_delivery_is_retried_with_the_same_id(hooked_model, receiver, message):
    receiver.answers = [500, 503]
    send(message)
    hooked_model.wait_for_receipts()

    ids = [r["headers"]["svix-id"] for r in receiver.received]
    assert len(ids) == 4 and ids[0] == ids[1] == ids[2] != ids[3]
    first = hooked_model.receipts()[0]
    assert (first["state"], first["attempts"]) == ("delivered", 3)


def test_receipts_that_keep_failing_are_given_up_and_the_model_keeps_working(hooked_model, receiver, message):
    receiver.answers = [500] * 6
    send(message)
    hooked_model.wait_for_receipts()
    assert [(r["state"], r["attempts"], r["last_error"]) for r in hooked_model.receipts()] == [
        ("failed", 3, "HTTP 500"),
        ("failed", 3, "HTTP 500"),
    ]
    send(message)  # the model still serves, and still sends receipts
    hooked_model.wait_for_receipts()
    assert [r["state"] for r in hooked_model.receipts()][2:] == ["delivered", "delivered"]


def test_unreachable_webhook_is_logged_not_fatal(message, monkeypatch):
    provider = ProviderModel(port=0, webhook_url=f"http://127.0.0.1:{free_port()}/hook", webhook_secret=SECRET).start()
    try:
        monkeypatch.setattr(resend, "api_key", "re_test")
        monkeypatch.setattr(resend, "api_url", provider.url)
        send(message)
        provider.wait_for_receipts()
        assert {(r["state"], r["last_error"]) for r in provider.receipts()} == {("failed", "URLError")}
        assert requests.get(f"{provider.url}/_model/sent").ok
    finally:
        provider.stop()


def test_paused_receipts_wait_until_resumed(hooked_model, receiver, message):
    hooked_model.pause_receipts()
    send(message)
    with pytest.raises(TimeoutError):
        hooked_model.wait_for_receipts(timeout=0.3)
    assert receiver.received == []
    assert {r["state"] for r in hooked_model.receipts()} == {"queued"}

    requests.post(f"{hooked_model.url}/_model/receipts/resume").raise_for_status()
    hooked_model.wait_for_receipts()
    assert len(receiver.received) == 2


def test_redelivery_repeats_the_receipt_under_its_original_id(hooked_model, receiver, message):
    send(message)
    hooked_model.wait_for_receipts()
    first = hooked_model.receipts()[0]["id"]
    assert requests.post(f"{hooked_model.url}/_model/receipts/redeliver", json={"id": first}).json() == {"ok": True}
    hooked_model.wait_for_receipts()

    assert [r["headers"]["svix-id"] for r in receiver.received][-1] == first
    assert receiver.received[-1]["body"] == receiver.received[0]["body"]
    assert requests.post(f"{hooked_model.url}/_model/receipts/redeliver", json={"id": "nope"}).status_code == 400


def test_reset_forgets_receipts(hooked_model, message):
    hooked_model.pause_receipts()
    send(message)
    hooked_model.reset()
    assert hooked_model.receipts() == []
    hooked_model.wait_for_receipts(timeout=1)


def test_without_a_webhook_url_no_receipts_are_built(model, message):
    send(message)
    assert model.receipts() == []
    model.wait_for_receipts(timeout=0.1)
    with pytest.raises(ValueError):
        model.redeliver_receipt("msg_1")


@pytest.mark.parametrize("secret", [None, "", "not-whsec", "whsec_***not base64***", "whsec_"])
def test_webhook_url_needs_a_usable_secret(secret):
    with pytest.raises(ValueError):
        ProviderModel(webhook_url="http://127.0.0.1:1/hook", webhook_secret=secret)


def test_command_line_refuses_a_webhook_url_without_a_secret():
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-m", "devtools.provider_model", "--port", "0", "--webhook-url", "http://127.0.0.1:1/hook"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "webhook_secret" in result.stderr


def test_the_suppression_api_adds_lists_reads_and_removes_with_its_events(hooked_model, receiver):
    added = resend.Suppressions.add({"email": " Ada@Example.com "})
    assert resend.Suppressions.add({"email": "ada@example.com"})["id"] == added["id"], "adding again: the same entry"
    [listed] = resend.Suppressions.list()["data"]
    assert (listed["id"], listed["email"], listed["origin"], listed["source_id"]) == (
        added["id"],
        "ada@example.com",
        "manual",
        None,
    )
    assert resend.Suppressions.get("ada@example.com")["id"] == added["id"]
    assert resend.Suppressions.remove(added["id"])["deleted"] is True
    assert resend.Suppressions.list()["data"] == []
    with pytest.raises(resend.exceptions.ResendError):
        resend.Suppressions.remove("ada@example.com")
    hooked_model.wait_for_receipts()
    assert [(e["type"], e["data"]["email"]) for e in receiver.events()] == [
        ("suppression.added", "ada@example.com"),
        ("suppression.removed", "ada@example.com"),
    ]
