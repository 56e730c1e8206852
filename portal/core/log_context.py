"""What every log line says about where it comes from: the request, and the outbox row.

A request ID is made for each web request (portal/web/observability.py), published with its emails
in the queue envelope's `telemetry.requestId` (portal/outbox/write/publish.py), and set again by the
worker for the job that delivers them (portal/outbox/send/consumer.py), so one ID follows an email from
the form that asked for it to the provider's answer. Context variables, so threads (the relay,
the scheduler, a threaded dev server) never see each other's values.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
outbox_id_var: ContextVar[str | None] = ContextVar("outbox_id", default=None)
# What we accept as a request ID from a proxy or an envelope: short, and nothing a log could be
# tricked with (no spaces, quotes or line breaks).
SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def new_request_id() -> str:
    return uuid.uuid4().hex


def safe_id(value) -> str | None:
    return value if isinstance(value, str) and SAFE_ID.match(value) else None


def current_request_id() -> str | None:
    return request_id_var.get()


@contextmanager
def log_context(*, request_id: str | None = None, outbox_id: str | None = None) -> Iterator[None]:
    """Log lines inside the block carry these IDs; the previous values come back after it."""
    tokens = [request_id_var.set(safe_id(request_id)), outbox_id_var.set(safe_id(outbox_id))]
    try:
        yield
    finally:
        outbox_id_var.reset(tokens[1])
        request_id_var.reset(tokens[0])


def envelope_context(envelope) -> contextmanager:
    """The log context of one queue message (its envelope may be anything: it is checked later)."""
    body = envelope if isinstance(envelope, dict) else {}
    telemetry = body.get("telemetry") if isinstance(body.get("telemetry"), dict) else {}
    return log_context(request_id=telemetry.get("requestId"), outbox_id=body.get("outboxId"))


class ContextFilter(logging.Filter):
    """Puts request_id and outbox_id on every record (None where unknown), for both formats."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id_var.get()
        if getattr(record, "outbox_id", None) is None:
            record.outbox_id = outbox_id_var.get()
        return True
