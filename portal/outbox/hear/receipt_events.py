"""Reading a provider receipt (Resend's JSON) into the fields the engine acts on.

The webhook verifies the signature first (portal/webhooks/signature.py). Nothing here touches
the database. Errors carry no part of the body: bodies hold addresses, and these messages reach logs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parseaddr
from typing import Any

from portal.core import clock
from portal.outbox.ground import bounce_classes

MAX_EVENT_TYPE_LENGTH = 100
MAX_ID_LENGTH = 256


class MalformedReceipt(ValueError):
    """Signed, but not a JSON object with an event type."""


@dataclass(frozen=True)
class Receipt:
    event_id: str  # the svix-id header: one per event, the same on every redelivery
    type: str  # e.g. email.delivered
    email_id: str | None  # data.email_id, the provider's message ID
    environment: str | None  # data.tags.environment
    outbox_id: str | None  # data.tags.outbox_id
    event_at: str | None  # created_at as a fixed-width UTC ISO string, or None if unusable
    recipient: str | None  # data.to[0], the bare address, lower-cased
    bounce_type: str | None  # data.bounce.type
    source: str = "webhook"  # or "lookup": learned by asking the provider (receipt_lookup.py)
    bounce_subtype: str | None = None  # data.bounce.subType

    @property
    def bounce_class(self) -> str | None:
        """A bounce's class (ground/bounce_classes.py); None for any other event."""
        if self.type != "email.bounced":
            return None
        return bounce_classes.classify(self.bounce_type, self.bounce_subtype)

    @property
    def kept_fields(self) -> str:
        """What the portal stores of a receipt: the fields it reads, not the body (opened and
        clicked events carry IP addresses and user agents, every event the subject and sender)."""
        return self._fields(self.recipient)

    @property
    def kept_fields_unnamed(self) -> str:
        """What the portal stores of a receipt about an erased email: the same, without the address."""
        return self._fields(None)

    def _fields(self, recipient: str | None) -> str:
        return json.dumps(
            {
                "type": self.type,
                "email_id": self.email_id,
                "created_at": self.event_at,
                "to": recipient,
                "bounce_type": self.bounce_type,
                "bounce_subtype": self.bounce_subtype,
                "environment": self.environment,
                "outbox_id": self.outbox_id,
            },
            sort_keys=True,
        )


def parse_receipt(event_id: str, body: bytes) -> Receipt:
    try:
        text = body.decode("utf-8")
        event = json.loads(text)
    except (ValueError, RecursionError):
        # RecursionError: deeply nested arrays are valid JSON that json cannot read.
        raise MalformedReceipt("the body is not JSON") from None
    if not isinstance(event, dict):
        raise MalformedReceipt("the body is not a JSON object")
    event_type = event.get("type")
    if not isinstance(event_type, str) or not 0 < len(event_type) <= MAX_EVENT_TYPE_LENGTH:
        raise MalformedReceipt("the event has no type")

    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    tags = read_tags(data.get("tags"))
    bounce = data.get("bounce") if isinstance(data.get("bounce"), dict) else {}
    return Receipt(
        event_id=event_id,
        type=event_type,
        email_id=_short_text(data.get("email_id")),
        environment=_short_text(tags.get("environment")),
        outbox_id=_short_text(tags.get("outbox_id")),
        event_at=event_time(event.get("created_at")),
        # A suppression.* event names its address in data.email (Resend's suppression object).
        recipient=first_recipient(data.get("email") if event_type.startswith("suppression.") else data.get("to")),
        bounce_type=_short_text(bounce.get("type")),
        bounce_subtype=_short_text(bounce.get("subType")),
    )


def read_tags(tags: Any) -> dict[str, str]:
    """Resend sends tags as {"name": "value"}; the API's own list of {name, value} is read too."""
    if isinstance(tags, dict):
        return {k: v for k, v in tags.items() if isinstance(v, str)}
    if isinstance(tags, list):
        return {
            tag["name"]: tag["value"]
            for tag in tags
            if isinstance(tag, dict) and isinstance(tag.get("name"), str) and isinstance(tag.get("value"), str)
        }
    return {}


def event_time(value: Any) -> str | None:
    """The event's time in the clock module's fixed-width format, so it orders as text and by julianday."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        moment = moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    # Four-digit years only: anything else would not be fixed-width, and is not a real receipt.
    if not 2000 <= moment.year <= 9999:
        return None
    return clock.iso(moment)


# A bare address (dot-atoms on both sides): parseaddr would return it unchanged, at 30 times the cost.
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_BARE_ADDRESS = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")


def first_recipient(to: Any) -> str | None:
    if isinstance(to, list):
        to = to[0] if to else None
    if not isinstance(to, str) or len(to) > 320:
        return None
    if _BARE_ADDRESS.fullmatch(to):
        return to.lower()
    address = parseaddr(to)[1].strip().lower()
    return address if "@" in address else None


def _short_text(value: Any) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= MAX_ID_LENGTH else None
