"""The provider model's receipts: Resend's webhook events, signed the way Svix signs them.

For every email the model sends, `events_for` builds what Resend would report: `email.sent`, then
`email.delivered`; a recipient whose local part contains "bounce" gets `email.bounced` (Permanent,
or another kind by a further word: BOUNCES) instead of delivered, and one containing "complain" gets
`email.complained` after delivered. "delayed" gets `email.delivery_delayed` and no delivery yet,
and "noreceipt" only `email.sent`: the delivery receipt that never came.

`ReceiptSender` posts them from one background thread, in order, each signed with
`svix-id`, `svix-timestamp` and `svix-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
under the base64-decoded secret after "whsec_". A failed delivery is logged and retried a few
times with the same svix-id (as Svix does), then given up; nothing here can stop the model.
Standard library only, like the rest of the model: the signature is computed here rather than by
the svix package, so the portal's verification is checked against an independent signer.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import hmac
import json
import logging
import threading
import time
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timedelta
from email.utils import parseaddr

log = logging.getLogger("devtools.provider_model.receipts")

SECRET_PREFIX = "whsec_"
# Pauses before the second and third tries; after the last one the receipt is given up.
RETRY_PAUSES = (0.2, 0.5)
POST_TIMEOUT_SECONDS = 5.0

QUEUED, DELIVERED, FAILED = "queued", "delivered", "failed"


def decode_secret(secret: str) -> bytes:
    """The HMAC key inside a whsec_ secret; ValueError if it is not one."""
    if not isinstance(secret, str) or not secret.startswith(SECRET_PREFIX):
        raise ValueError("webhook_secret must be a whsec_… secret")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except binascii.Error:
        raise ValueError("webhook_secret must be base64 after whsec_") from None
    if not key:
        raise ValueError("webhook_secret must not be empty")
    return key


def sign(key: bytes, message_id: str, timestamp: int, body: str) -> str:
    mac = hmac.new(key, f"{message_id}.{timestamp}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def _resend_time(moment: datetime) -> str:
    # Resend's format: "2026-10-15T09:30:12.345Z".
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def last_event_for(email: dict, now: datetime) -> str:
    """The provider's own record of an email's last event, as GET /emails/{id} reports it: the last
    receipt the model builds for it, except that a "noreceipt" recipient's email was delivered (only
    the webhook telling so never came)."""
    local_part = parseaddr(email["to"][0])[1].partition("@")[0].lower() if email["to"] else ""
    if "noreceipt" in local_part:
        return "delivered"
    return events_for(email, now)[-1]["type"].removeprefix("email.")


# Resend's bounce object is {"type", "subType", "message"}, with Amazon SES's types and subtypes. A
# "bounce" recipient's local part picks one by a further word; "bounce" alone is Permanent/General.
BOUNCES = (
    ("nomailbox", "Permanent", "NoEmail", "The recipient's mailbox does not exist."),
    ("spam", "Transient", "ContentRejected", "The receiving server rejected the message's content."),
    ("transient", "Transient", "MailboxFull", "The recipient's mailbox is full."),
    ("full", "Transient", "MailboxFull", "The recipient's mailbox is full."),
    ("temporary", "Transient", "General", "The receiving server could not take the email for now."),
)


def bounce_for(local_part: str) -> dict:
    for word, kind, subtype, message in BOUNCES:
        if word in local_part:
            return {"type": kind, "subType": subtype, "message": message}
    return {
        "type": "Permanent",
        "subType": "General",
        "message": "The recipient's mail server permanently rejected the email.",
    }


def events_for(email: dict, now: datetime) -> list[dict]:
    """Resend's webhook payloads for one sent email, oldest first, a moment apart."""
    local_part = parseaddr(email["to"][0])[1].partition("@")[0].lower() if email["to"] else ""
    data = {
        "email_id": email["id"],
        "from": email["from"],
        "to": list(email["to"]),
        "subject": email["subject"],
        "created_at": email["created_at"],
        # Resend's webhooks carry tags as an object, not the API's list of {name, value}.
        "tags": {tag["name"]: tag["value"] for tag in email["tags"]},
    }
    steps = [("email.sent", {})]
    if "noreceipt" in local_part:
        pass  # the provider's delivery receipt never comes (lost, or never sent): only email.sent
    elif "delayed" in local_part:
        steps.append(("email.delivery_delayed", {}))
    elif "bounce" in local_part:
        steps.append(("email.bounced", {"bounce": bounce_for(local_part)}))
    else:
        steps.append(("email.delivered", {}))
        if "complain" in local_part:
            steps.append(("email.complained", {}))
    return [
        {
            "type": kind,
            "created_at": _resend_time(now + timedelta(milliseconds=500 * i)),
            "data": {**copy.deepcopy(data), **extra},
        }
        for i, (kind, extra) in enumerate(steps)
    ]


class ReceiptSender:
    """Posts receipts to one URL from a background thread, one at a time, oldest first."""

    def __init__(self, url: str, secret: str):
        self.url = url
        self._key = decode_secret(secret)
        self._records: list[dict] = []
        self._queue: list[dict] = []
        self._busy = False
        self._paused = False
        self._stopping = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        # Loopback in development and tests: an http_proxy in the environment must not apply.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # --- controls -----------------------------------------------------------------------------

    def start(self) -> None:
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="provider-model:receipts", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=POST_TIMEOUT_SECONDS + 1)
            self._thread = None

    def enqueue(self, events: list[dict]) -> None:
        with self._changed:
            for event in events:
                record = {
                    "id": f"msg_{uuid.uuid4().hex}",
                    "type": event["type"],
                    "email_id": event["data"].get("email_id"),
                    "payload": event,
                    "state": QUEUED,
                    "attempts": 0,
                    "last_status": None,
                    "last_error": None,
                }
                self._records.append(record)
                self._queue.append(record)
            self._changed.notify_all()

    def redeliver(self, event_id: str) -> None:
        """Send a receipt again with its original svix-id, as the provider does when it retries."""
        with self._changed:
            record = next((r for r in self._records if r["id"] == event_id), None)
            if record is None:
                raise ValueError(f"no receipt {event_id!r}")
            if record not in self._queue:
                record["state"] = QUEUED
                self._queue.append(record)
            self._changed.notify_all()

    def pause(self) -> None:
        with self._changed:
            self._paused = True

    def resume(self) -> None:
        with self._changed:
            self._paused = False
            self._changed.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """True once nothing is queued or in flight; False if that takes longer than `timeout`."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._queue or self._busy:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)
        return True

    def records(self) -> list[dict]:
        with self._changed:
            return copy.deepcopy(self._records)

    def reset(self) -> None:
        with self._changed:
            self._records.clear()
            self._queue.clear()
            self._paused = False
            self._changed.notify_all()

    # --- the sending thread -------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._stopping and (self._paused or not self._queue):
                    self._changed.wait()
                if self._stopping:
                    return
                record = self._queue.pop(0)
                self._busy = True
            try:
                self._deliver(record)
            except Exception:  # never let one receipt end the thread
                log.exception("receipt %s: unexpected error", record["id"])
            finally:
                with self._changed:
                    self._busy = False
                    self._changed.notify_all()

    def _deliver(self, record: dict) -> None:
        body = json.dumps(record["payload"])
        for pause in (0.0, *RETRY_PAUSES):
            if pause and self._sleep(pause):
                return
            status, error = self._post(record["id"], body)
            with self._changed:
                record["attempts"] += 1
                record["last_status"], record["last_error"] = status, error
                if status is not None and 200 <= status < 300:
                    record["state"] = DELIVERED
                    return
        with self._changed:
            record["state"] = FAILED
        log.warning(
            "receipt %s (%s) not accepted after %d tries: %s",
            record["id"],
            record["type"],
            record["attempts"],
            record["last_error"] or record["last_status"],
        )

    def _post(self, message_id: str, body: str) -> tuple[int | None, str | None]:
        # The timestamp is the real time of this attempt, not the model's clock: the receiver
        # refuses signatures more than five minutes from its own time.
        timestamp = int(time.time())
        request = urllib.request.Request(
            self.url,
            data=body.encode(),
            method="POST",
            headers={
                "content-type": "application/json",
                "user-agent": "provider-model-webhooks/1",
                "svix-id": message_id,
                "svix-timestamp": str(timestamp),
                "svix-signature": sign(self._key, message_id, timestamp, body),
            },
        )
        try:
            with self._opener.open(request, timeout=POST_TIMEOUT_SECONDS) as response:
                return response.status, None
        except urllib.error.HTTPError as error:
            return error.code, f"HTTP {error.code}"
        except Exception as error:  # refused, reset, timed out, bad URL: all just a failed try
            return None, type(error).__name__

    def _sleep(self, seconds: float) -> bool:
        """Wait between tries; True if the sender is stopping meanwhile."""
        with self._changed:
            self._changed.wait_for(lambda: self._stopping, timeout=seconds)
            return self._stopping
