"""A local model of the Resend email API, for development and tests.

It answers the requests the `resend` SDK makes (POST /emails, POST /emails/batch, GET /emails/<id>,
GET /emails) under Resend's documented idempotency rules, and lets a test inject the failures the outbox has to survive:
a 5xx, a 429, an answer lost after the email was accepted, a slow acceptance. A mail viewer
shows what was "sent", and when a webhook URL is given, signed receipts (`receipts.py`) are
posted for each email sent. Standard library only, and nothing imported from the rest of `portal`,
so it runs before the application is installed or configured.

This module holds the provider's state and decisions; `server.py` is its HTTP face.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import math
import threading
import time
import uuid
from collections import deque
from datetime import UTC, datetime, timedelta
from email.utils import parseaddr
from pathlib import Path
from typing import Any

from . import mailbox
from .receipts import ReceiptSender, _resend_time, events_for, last_event_for
from .server import make_server
from .validation import Answer, check_auth, error, rate_limited, validate

__all__ = ["ProviderModel", "FAULT_MODES"]

FAULT_MODES = ("http_500", "http_429", "drop_after_accept", "slow_accept")

_MAX_KEY_LENGTH = 256
SEND_PATH, BATCH_PATH, SUPPRESSIONS_PATH = "/emails", "/emails/batch", "/suppressions"
_BATCH_LIMIT = 100  # emails in one batch request
VALIDATION_MODES = ("strict", "permissive")


@dataclasses.dataclass
class _KeyRecord:
    fingerprint: str
    first_used: datetime
    answer: Answer | None = None  # None while the first request with the key is in flight


class ProviderModel:
    """The provider: its sent mail, its idempotency keys, its clock and the faults to inject."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        idempotency_window_seconds: float = 86400,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        mailbox_path: Path | None = None,
        rate_limit_per_second: int | None = None,
    ):
        if idempotency_window_seconds <= 0:
            raise ValueError("idempotency_window_seconds must be positive")
        if rate_limit_per_second is not None and rate_limit_per_second < 1:
            raise ValueError("rate_limit_per_second must be at least 1")
        # Resend's per-team limit (5/s by default): None means unlimited.
        self.rate_limit_per_second = rate_limit_per_second
        self.host = host
        self.port = port
        self.idempotency_window = timedelta(seconds=idempotency_window_seconds)
        if webhook_url and not webhook_secret:
            raise ValueError("webhook_url needs a webhook_secret to sign receipts with")
        self.webhook_url = webhook_url
        self.webhook_secret = webhook_secret
        self._receipts = ReceiptSender(webhook_url, webhook_secret) if webhook_url else None
        self._lock = threading.Lock()
        self._server = None
        self._thread: threading.Thread | None = None
        self._forget()
        self._mailbox_path = mailbox_path
        self._mailbox_lock = threading.Lock()
        if mailbox_path is not None:
            self._sent = mailbox.load(mailbox_path)  # the viewer remembers mail sent before a restart

    def _forget(self) -> None:
        self._sent: list[dict] = []
        self._log: list[dict] = []
        self._keys: dict[str, _KeyRecord] = {}
        self._faults: deque[dict] = deque()
        self._clock_offset = 0.0
        self._window: deque[float] = deque()  # monotonic times of the requests in the last second
        self._suppressions: dict[str, dict] = {}  # Resend's team-wide suppression list, by address

    # --- running -----------------------------------------------------------------------------

    def start(self) -> ProviderModel:
        if self._server is not None:
            raise RuntimeError("the provider model is already running")
        self._server = make_server(self, self.host, self.port)
        self.port = self._server.server_address[1]
        # A short poll interval so stop() returns quickly: tests start and stop one model each.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"provider-model:{self.port}",
            daemon=True,
        )
        self._thread.start()
        if self._receipts is not None:
            self._receipts.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        self._thread.join()
        if self._receipts is not None:
            self._receipts.stop()

    def __enter__(self) -> ProviderModel:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the provider model is not running; call start() first")
        return f"http://{self.host}:{self.port}"

    # --- controls and inspection (thread-safe) -------------------------------------------------

    def fail_next(
        self,
        mode: str,
        count: int = 1,
        retry_after: float | None = None,
        delay: float | None = None,
        path: str = SEND_PATH,
        skip: int = 0,
    ) -> None:
        """Make the next `count` requests to `path` (POST /emails, or /emails/batch: the fault then
        meets the whole batch; or any request to /suppressions) meet `mode` (see FAULT_MODES), after
        letting `skip` requests to it through (a fault in the middle of a paged list)."""
        if path not in (SEND_PATH, BATCH_PATH, SUPPRESSIONS_PATH):
            raise ValueError(f"faults apply to {SEND_PATH}, {BATCH_PATH} or {SUPPRESSIONS_PATH}, not {path!r}")
        if path == SUPPRESSIONS_PATH and mode == "slow_accept":
            raise ValueError("slow_accept applies to sends only")
        if not isinstance(skip, int) or isinstance(skip, bool) or skip < 0:
            raise ValueError("skip must be a whole number, 0 or more")
        if mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {mode!r}; expected one of {', '.join(FAULT_MODES)}")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ValueError("count must be a positive integer")
        fault = {
            "mode": mode,
            "retry_after": 1 if retry_after is None else float(retry_after),
            "delay": 1.0 if delay is None else float(delay),
            "path": path,
            "skip": 0,
        }
        if fault["retry_after"] < 0 or fault["delay"] < 0:
            raise ValueError("retry_after and delay must not be negative")
        with self._lock:
            self._faults.extend({**fault, "skip": skip if n == 0 else 0} for n in range(count))

    def advance_clock(self, seconds: float) -> None:
        seconds = float(seconds)
        if seconds < 0:
            raise ValueError("the model's clock only moves forward")
        with self._lock:
            self._clock_offset += seconds

    def reset(self) -> None:
        with self._lock:
            self._forget()
        self._save_mailbox()
        if self._receipts is not None:
            self._receipts.reset()

    def sent(self) -> list[dict]:
        with self._lock:
            return copy.deepcopy(self._sent)

    def requests(self) -> list[dict]:
        """Every send request, oldest first: at, path, idempotency_key, fingerprint (of the raw
        body), status, outcome, message_id (a single send's) or message_ids (a batch's, by position),
        and for a batch its raw body as text."""
        with self._lock:
            return copy.deepcopy(self._log)

    def batch_bodies(self) -> list[str]:
        """The raw bodies of every batch request, oldest first (a retry's must equal its first's)."""
        with self._lock:
            return [entry["body"] for entry in self._log if entry["path"] == BATCH_PATH]

    # --- receipts (no-ops without a webhook_url) ------------------------------------------------

    def post_receipts_to(self, webhook_url: str, webhook_secret: str) -> None:
        """From now on, post signed receipts to `webhook_url` (a model started without one: the
        receiver may only exist once the model's URL is known, as a test's portal does)."""
        if self._receipts is not None:
            raise RuntimeError("the model already posts receipts")
        self.webhook_url, self.webhook_secret = webhook_url, webhook_secret
        self._receipts = ReceiptSender(webhook_url, webhook_secret)
        if self._server is not None:
            self._receipts.start()

    def receipts(self) -> list[dict]:
        """Every receipt built so far, oldest first: id (svix-id), type, email_id, payload,
        state (queued, delivered or failed), attempts, last_status, last_error."""
        return self._receipts.records() if self._receipts is not None else []

    def pause_receipts(self) -> None:
        """Hold receipts in the queue (they are still built) until resume_receipts()."""
        if self._receipts is not None:
            self._receipts.pause()

    def resume_receipts(self) -> None:
        if self._receipts is not None:
            self._receipts.resume()

    def redeliver_receipt(self, event_id: str) -> None:
        """Post a receipt again under its original svix-id, as a retrying provider does."""
        if self._receipts is None:
            raise ValueError("no webhook_url: the model sends no receipts")
        self._receipts.redeliver(event_id)

    def wait_for_receipts(self, timeout: float = 10.0) -> None:
        """Block until no receipt is queued or in flight; TimeoutError after `timeout` seconds."""
        if self._receipts is not None and not self._receipts.wait_idle(timeout):
            raise TimeoutError(f"receipts still queued after {timeout}s (paused, or the receiver is slow)")

    def _now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self._clock_offset)

    # --- the Resend API, called by the HTTP layer ----------------------------------------------

    def handle_send(self, raw: bytes, authorization: str | None, idempotency_key: str | None) -> Answer:
        """POST /emails: every request is logged, then faults, validation and idempotency apply."""
        return self._handle(SEND_PATH, raw, authorization, idempotency_key, "strict")

    def handle_batch(
        self, raw: bytes, authorization: str | None, idempotency_key: str | None, validation: str | None
    ) -> Answer:
        """POST /emails/batch: 1-100 emails under one key, one request against the rate limit and
        one fault for the whole batch. `x-batch-validation` strict (the default) refuses the whole
        list if one item is invalid; permissive sends the valid ones and names the others in
        `errors` by index."""
        return self._handle(BATCH_PATH, raw, authorization, idempotency_key, validation or "strict")

    def _handle(self, path: str, raw: bytes, authorization, idempotency_key, validation: str) -> Answer:
        fingerprint = hashlib.sha256(raw).hexdigest()
        with self._lock:
            entry = {
                "at": self._now().isoformat(),
                "path": path,
                "idempotency_key": idempotency_key,
                "fingerprint": fingerprint,
                "status": None,
                "outcome": "in_flight",
                "message_id": None,
            }
            if path == BATCH_PATH:
                entry.update(message_ids=[], body=raw.decode("utf-8", "replace"))
            self._log.append(entry)
            refused = check_auth(authorization)
            limited, limit_headers = self._take_rate_slot() if refused is None else (False, {})
            # A request the provider refuses at the door never reaches the faulty machinery.
            fault = self._fault_for(path) if refused is None and not limited else None
        if refused is not None:
            return self._settle(entry, refused, "unauthorized")
        if limited:
            return self._settle(entry, rate_limited(limit_headers["ratelimit-reset"], limit_headers), "rate_limited")

        mode = fault["mode"] if fault else None
        if mode == "http_500":
            return self._settle(
                entry, error(500, "application_error", "Injected fault: internal server error."), "fault_500"
            )
        if mode == "http_429":
            return self._settle(entry, rate_limited(fault["retry_after"]), "fault_429")

        if validation not in VALIDATION_MODES:
            answer, outcome = (
                error(422, "validation_error", "x-batch-validation must be strict or permissive."),
                "invalid",
            )
        else:
            answer, outcome = self._accept(
                raw,
                fingerprint,
                idempotency_key,
                delay=fault["delay"] if mode == "slow_accept" else 0,
                batch=path == BATCH_PATH,
                permissive=validation == "permissive",
            )
        if mode == "drop_after_accept":
            # Whatever the provider decided stands; only the answer is lost on the way back.
            answer = dataclasses.replace(answer, drop=True)
            if outcome == "sent":
                outcome = "dropped_after_accept"
        if limit_headers:
            answer = dataclasses.replace(answer, headers={**limit_headers, **answer.headers})
        return self._settle(entry, answer, outcome)

    def _fault_for(self, path: str) -> dict | None:
        """Under the lock: the first fault waiting for this path, taken."""
        for fault in self._faults:
            if fault["path"] == path:
                if fault["skip"]:
                    fault["skip"] -= 1
                    return None
                self._faults.remove(fault)
                return fault
        return None

    def _take_rate_slot(self) -> tuple[bool, dict]:
        """Under the lock: (refused, headers). A moving one-second window, as Resend's limit is per
        second; a refused request does not count. The headers are Resend's: ratelimit-limit,
        ratelimit-remaining, and ratelimit-reset in whole seconds."""
        limit = self.rate_limit_per_second
        if limit is None:
            return False, {}
        now = time.monotonic()
        while self._window and self._window[0] <= now - 1.0:
            self._window.popleft()
        refused = len(self._window) >= limit
        if not refused:
            self._window.append(now)
        reset = max(1, math.ceil(self._window[0] + 1.0 - now)) if self._window else 1
        return refused, {
            "ratelimit-limit": str(limit),
            "ratelimit-remaining": str(max(0, limit - len(self._window))),
            "ratelimit-reset": str(reset),
        }

    def handle_get(self, authorization: str | None, message_id: str) -> Answer:
        refused = check_auth(authorization)
        if refused is not None:
            return refused
        with self._lock:
            email = next((e for e in self._sent if e["id"] == message_id), None)
        if email is None:
            return error(404, "not_found", "Email not found")
        return Answer(
            200,
            {
                "object": "email",
                "id": email["id"],
                "from": email["from"],
                "to": email["to"],
                "cc": email["cc"] or None,
                "bcc": email["bcc"] or None,
                "reply_to": email["reply_to"] or None,
                "subject": email["subject"],
                "html": email["html"],
                "text": email["text"],
                "created_at": email["created_at"],
                "scheduled_at": None,
                "last_event": last_event_for(email, self._now()),
                # Resend's documented example shows no tags here; the model returns them, and the
                # portal's lookup also copes with an answer without them.
                "tags": email["tags"],
            },
        )

    def handle_list(self, authorization: str | None, query: dict) -> Answer:
        """GET /emails: Resend's "list sent emails", newest first, paged by `limit` (1-100,
        default 20) and an `after` or `before` cursor (an email ID). No tags, as in Resend's docs."""
        refused = check_auth(authorization)
        if refused is not None:
            return refused
        try:
            limit = int(query.get("limit", 20))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            return error(422, "validation_error", "The `limit` parameter must be between 1 and 100.")
        if query.get("after") and query.get("before"):
            return error(422, "validation_error", "Use either `after` or `before`, not both.")
        with self._lock:
            newest_first = list(reversed(self._sent))
        ids = [e["id"] for e in newest_first]
        if query.get("after"):
            start = ids.index(query["after"]) + 1 if query["after"] in ids else len(ids)
            chosen = newest_first[start : start + limit]
            has_more = start + limit < len(ids)
        elif query.get("before"):
            end = ids.index(query["before"]) if query["before"] in ids else 0
            chosen = newest_first[max(0, end - limit) : end]
            has_more = end - limit > 0
        else:
            chosen, has_more = newest_first[:limit], len(ids) > limit
        data = [
            {
                "id": e["id"],
                "to": e["to"],
                "from": e["from"],
                "created_at": e["created_at"],
                "subject": e["subject"],
                "bcc": e["bcc"] or None,
                "cc": e["cc"] or None,
                "reply_to": e["reply_to"] or None,
                "last_event": "sent",
                "scheduled_at": None,
            }
            for e in chosen
        ]
        return Answer(200, {"object": "list", "has_more": has_more, "data": data})

    def _accept(
        self, raw: bytes, fingerprint: str, key: str | None, delay: float, batch: bool, permissive: bool
    ) -> tuple[Answer, str]:
        if key is not None and not 1 <= len(key) <= _MAX_KEY_LENGTH:
            return error(
                400, "invalid_idempotency_key", "The idempotency key has to be between 1-256 characters."
            ), "invalid"
        try:
            payload = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return error(400, "validation_error", "The request body is not valid JSON."), "invalid"
        problem, refused_items = _validate_batch(payload, permissive) if batch else (validate(payload), {})
        if problem is not None:
            time.sleep(delay)  # a slow provider is slow to refuse, too
            return problem, "invalid"

        with self._lock:
            record = self._live_key(key) if key is not None else None
            if record is not None:
                if record.answer is None:
                    return error(
                        409,
                        "concurrent_idempotent_requests",
                        "Same idempotency key used while original request is still in progress.",
                    ), "conflict_concurrent"
                if record.fingerprint != fingerprint:
                    return error(
                        409,
                        "invalid_idempotent_request",
                        "This idempotency key has already been used on a request that had a different payload. "
                        "Retrying this request is useless without changing the idempotency key or payload.",
                    ), "conflict_payload"
                return record.answer, "replayed"
            if key is not None:
                # Reserved before any delay, so a second request meanwhile sees it in flight.
                record = self._keys[key] = _KeyRecord(fingerprint, self._now())

        if delay:
            time.sleep(delay)

        with self._lock:
            if batch:
                emails = [
                    self._record(item, key, fingerprint)
                    for index, item in enumerate(payload)
                    if index not in refused_items
                ]
                body = {"data": [{"id": email["id"]} for email in emails]}
                if permissive:
                    body["errors"] = [{"index": i, "message": m} for i, m in sorted(refused_items.items())]
                answer = Answer(200, body)
            else:
                emails = [self._record(payload, key, fingerprint)]
                answer = Answer(200, {"id": emails[0]["id"]})
            if record is not None:
                record.answer = answer
        if self._mailbox_path is not None or self._receipts is not None:
            # A copy only when something outlives this call: the model's CPU is the benchmark's too.
            for email in emails:
                self._after_send(copy.deepcopy(email))
        return answer, "sent"

    def _live_key(self, key: str) -> _KeyRecord | None:
        """The key's record, unless the window since its first use has passed (then forget it)."""
        record = self._keys.get(key)
        if record is not None and self._now() - record.first_used >= self.idempotency_window:
            del self._keys[key]
            return None
        return record

    def _record(self, payload: dict, key: str | None, fingerprint: str) -> dict:
        email = {
            "id": str(uuid.uuid4()),
            "from": payload["from"],
            "to": _as_list(payload["to"]),
            "cc": _as_list(payload.get("cc")),
            "bcc": _as_list(payload.get("bcc")),
            "reply_to": _as_list(payload.get("reply_to")),
            "subject": payload["subject"],
            "html": payload.get("html"),
            "text": payload.get("text"),
            "tags": payload.get("tags") or [],
            "headers": payload.get("headers") or {},
            "attachments": payload.get("attachments") or [],
            "idempotency_key": key,
            "created_at": self._now().isoformat(),
            "fingerprint": fingerprint,
        }
        self._sent.append(email)
        return email

    def _settle(self, entry: dict, answer: Answer, outcome: str) -> Answer:
        with self._lock:
            entry["status"] = "dropped" if answer.drop else answer.status
            entry["outcome"] = outcome
            if answer.status == 200 and "data" in answer.body:
                entry["message_ids"] = [item["id"] for item in answer.body["data"]]
            elif answer.status == 200:
                entry["message_id"] = answer.body["id"]
        return answer

    def _save_mailbox(self) -> None:
        """Write the sent mail to the mailbox file, if there is one; in order, newest state last."""
        if self._mailbox_path is None:
            return
        with self._mailbox_lock:
            mailbox.save(self._mailbox_path, self.sent())

    def _after_send(self, email: dict) -> None:
        """Called once per email actually sent, outside the lock: save it, queue its receipts. A
        permanent bounce or a complaint puts the address on the model's suppression list, as Resend
        does, with its suppression.added event after the email's own."""
        self._save_mailbox()
        events = events_for(email, self._now())
        if self._receipts is not None:
            self._receipts.enqueue(events)
        for event in events:
            bounce = event["data"].get("bounce") or {}
            if event["type"] == "email.complained" or (
                event["type"] == "email.bounced" and bounce.get("type") == "Permanent"
            ):
                address = parseaddr(email["to"][0])[1].strip().lower()
                self.suppress(
                    address,
                    origin="complaint" if event["type"] == "email.complained" else "bounce",
                    source_id=email["id"],
                )

    # --- the suppression list (Resend's /suppressions API and its suppression.* events) ------------

    def suppressions(self) -> list[dict]:
        """The model's suppression list, oldest first."""
        with self._lock:
            return [dict(entry) for entry in self._suppressions.values()]

    def suppress(self, address: str, origin: str = "manual", source_id: str | None = None) -> dict:
        """Add `address` (as POST /suppressions does, or a hard bounce): the entry, new or existing;
        a new one sends suppression.added."""
        address = address.strip().lower()
        with self._lock:
            entry = self._suppressions.get(address)
            if entry is not None:
                return dict(entry)
            entry = {
                "id": str(uuid.uuid4()),
                "email": address,
                "origin": origin,
                "source_id": source_id,
                "created_at": _resend_time(self._now()),
            }
            self._suppressions[address] = entry
        self._suppression_event("suppression.added", entry)
        return dict(entry)

    def unsuppress(self, id_or_email: str) -> dict | None:
        """Remove an entry by its ID or address (DELETE /suppressions/{id_or_email}); None if absent."""
        key = id_or_email.strip().lower()
        with self._lock:
            address = next(
                (a for a, entry in self._suppressions.items() if a == key or entry["id"] == id_or_email), None
            )
            entry = self._suppressions.pop(address, None) if address is not None else None
        if entry is not None:
            self._suppression_event("suppression.removed", entry)
        return entry

    def _suppression_event(self, kind: str, entry: dict) -> None:
        if self._receipts is not None:
            self._receipts.enqueue([{"type": kind, "created_at": _resend_time(self._now()), "data": dict(entry)}])

    def handle_suppressions(
        self, authorization: str | None, method: str, rest: str, raw: bytes, query: dict | None = None
    ) -> Answer:
        """/suppressions: POST adds {"email"}; GET lists, oldest first, all at once or, with `limit`
        (1-100), a page after or before a cursor (an entry's ID), with `has_more`; with an ID or
        address after the slash, GET reads one and DELETE removes one. As Resend documents them:
        each request counts against the team's rate limit, and a fault set for /suppressions meets it
        (a 429 or 500 answer, or a connection closed without one)."""
        refused = check_auth(authorization)
        if refused is not None:
            return refused
        with self._lock:
            limited, limit_headers = self._take_rate_slot()
            fault = None if limited else self._fault_for(SUPPRESSIONS_PATH)
        if limited:
            return rate_limited(limit_headers["ratelimit-reset"], limit_headers)
        if fault is not None:
            if fault["mode"] == "http_429":
                return rate_limited(fault["retry_after"])
            if fault["mode"] == "http_500":
                return error(500, "application_error", "Injected fault: internal server error.")
        answer = self._suppressions_answer(method, rest, raw, query or {})
        # drop_after_accept: the request is carried out, and its answer lost on the way back.
        return dataclasses.replace(answer, drop=True) if fault is not None else answer

    def _suppressions_answer(self, method: str, rest: str, raw: bytes, query: dict) -> Answer:
        if method == "POST" and not rest:
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return error(422, "validation_error", "The body is not JSON")
            email = body.get("email") if isinstance(body, dict) else None
            if not isinstance(email, str) or "@" not in email:
                return error(422, "validation_error", "The `email` field must be an email address")
            return Answer(200, {"object": "suppression", "id": self.suppress(email)["id"]})
        if method == "GET" and not rest:
            return self._list_suppressions(query)
        if method == "GET":
            key = rest.strip().lower()
            entry = next((e for e in self.suppressions() if e["email"] == key or e["id"] == rest), None)
            if entry is None:
                return error(404, "not_found", "Suppression not found")
            return Answer(200, {"object": "suppression", **entry})
        if method == "DELETE" and rest:
            entry = self.unsuppress(rest)
            if entry is None:
                return error(404, "not_found", "Suppression not found")
            return Answer(200, {"object": "suppression", "id": entry["id"], "deleted": True})
        return error(405, "method_not_allowed", "Method not allowed")

    def _list_suppressions(self, query: dict) -> Answer:
        entries = [{"object": "suppression", **entry} for entry in self.suppressions()]
        if query.get("origin"):
            entries = [entry for entry in entries if entry["origin"] == query["origin"]]
        if "limit" not in query:
            return Answer(200, {"object": "list", "has_more": False, "data": entries})
        try:
            limit = int(query["limit"])
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            return error(422, "validation_error", "The `limit` parameter must be between 1 and 100.")
        if query.get("after") and query.get("before"):
            return error(422, "validation_error", "Use either `after` or `before`, not both.")
        ids = [entry["id"] for entry in entries]
        if query.get("before"):
            end = ids.index(query["before"]) if query["before"] in ids else 0
            return Answer(
                200, {"object": "list", "has_more": end - limit > 0, "data": entries[max(0, end - limit) : end]}
            )
        after = query.get("after")
        start = 0 if not after else ids.index(after) + 1 if after in ids else len(ids)
        page = entries[start : start + limit]
        return Answer(200, {"object": "list", "has_more": start + limit < len(ids), "data": page})


def _validate_batch(payload: Any, permissive: bool) -> tuple[Answer | None, dict[int, str]]:
    """(an answer refusing the whole request, or None; the refused items by index, permissive only).

    Resend's rules for a batch: a list of 1-100 emails, each valid as a single one, and none with
    `attachments` or `scheduled_at`, which a batch does not carry."""
    if not isinstance(payload, list) or not 1 <= len(payload) <= _BATCH_LIMIT:
        return error(422, "validation_error", f"A batch holds 1 to {_BATCH_LIMIT} emails."), {}
    refused: dict[int, str] = {}
    for index, item in enumerate(payload):
        if isinstance(item, dict) and ("attachments" in item or "scheduled_at" in item):
            refused[index] = "Attachments and scheduled_at are not supported in a batch."
            continue
        problem = validate(item)
        if problem is not None:
            refused[index] = str(problem.body.get("message", "invalid email"))
    if refused and not permissive:
        index, message = min(refused.items())
        return error(422, "validation_error", f"emails[{index}]: {message}"), {}
    if len(refused) == len(payload):
        return error(422, "validation_error", "No email of the batch is valid."), {}
    return None, refused


def _as_list(value: Any) -> list:
    if value is None or value == "":
        return []
    return [value] if isinstance(value, str) else list(value)
