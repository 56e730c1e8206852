""" "Ask the provider" about an email whose outcome is unknown, before a person decides.

Resend can retrieve an email by its ID and list sent emails, newest first; it cannot search by
tag. So: a row holding a message ID is retrieved by it; otherwise the emails listed since the
row's first attempt are narrowed to those addressed to the row's recipient, and each of those is
retrieved and matched on the `outbox_id` tag every email carries. An answer that carries no tags
leaves such an email a candidate for the person to judge, never a match. The lookup only reads:
the decision (confirm as sent, send again) stays with the operator.

Its requests count against the same provider rate limit as sending (Resend's is per team): each
takes a slot from the workers' shared window first, so a lookup of up to fifteen requests never
pushes the sends into 429s. If no slot comes within LOOKUP_WAIT_SECONDS, it stops and says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from redis.exceptions import RedisError
from resend.exceptions import ResendError

from portal.core import clock
from portal.outbox.ground.provider import clean_tag

PAGE_SIZE = 100
# At most this many list pages and retrievals per lookup: an operator's question, not a crawl.
MAX_PAGES = 5
MAX_RETRIEVALS = 10
# The provider's clock and ours may differ a little.
CLOCK_SLACK = timedelta(minutes=5)
# A person waits for the page: how long all of a lookup's requests may wait for rate slots.
LOOKUP_WAIT_SECONDS = 10.0
RATE_LIMITED = "rate_limited"


class _NoSlotInTime(Exception):
    pass


@dataclass(frozen=True)
class ProviderEmail:
    message_id: str
    created_at: str
    last_event: str | None

    @property
    def display_created(self) -> str:
        moment = _parse(self.created_at)
        return clock.iso(moment) if moment else self.created_at


@dataclass(frozen=True)
class LookupResult:
    found: ProviderEmail | None = None  # an email carrying this row's outbox_id tag
    candidates: list[ProviderEmail] = field(default_factory=list)  # same address, no tags to tell
    listed: int = 0  # emails looked at
    complete: bool = True  # False: the search stopped at its limits before the row's first attempt
    error: str | None = None  # the provider could not be asked (its error type, nothing else)


def ask_provider(provider, row: dict, slots=None) -> LookupResult:
    """Look for the row's email at the provider. `row` has id, recipient, provider_message_id,
    first_attempt_at and created_at; `slots` is the shared ProviderRateLimit (rate_limit.py)."""
    deadline = time.monotonic() + LOOKUP_WAIT_SECONDS
    asking = _Asking(provider, lambda: slots is None or slots.acquire(deadline))
    try:
        if row.get("provider_message_id"):
            email = asking.retrieve_email(row["provider_message_id"])
            return LookupResult(found=_email(email), listed=1)
        return _search(asking, row)
    except _NoSlotInTime:
        return LookupResult(error=RATE_LIMITED, complete=False)
    except RedisError as error:  # the shared limit could not be read: ask nothing rather than around it
        return LookupResult(error=type(error).__name__, complete=False)
    except ResendError as error:
        return LookupResult(error=str(getattr(error, "error_type", "") or "provider_error"), complete=False)
    except RuntimeError as error:  # the transport failed: no answer came back
        return LookupResult(error=type(error).__name__, complete=False)


class _Asking:
    """The provider's two reads, each after a rate slot."""

    def __init__(self, provider, take_slot):
        self.provider, self.take_slot = provider, take_slot

    def retrieve_email(self, message_id: str) -> dict:
        self._wait_for_slot()
        return self.provider.retrieve_email(message_id)

    def list_emails(self, **params) -> dict:
        self._wait_for_slot()
        return self.provider.list_emails(**params)

    def _wait_for_slot(self) -> None:
        if not self.take_slot():
            raise _NoSlotInTime()


def _search(provider, row: dict) -> LookupResult:
    since = _parse(row.get("first_attempt_at") or row["created_at"])
    since = since - CLOCK_SLACK if since else None
    recipient = (row.get("recipient") or "").lower()
    tag_value = clean_tag(row["id"])
    candidates, listed, retrievals, after = [], 0, 0, None
    for _ in range(MAX_PAGES):
        page = provider.list_emails(limit=PAGE_SIZE, after=after)
        data = page.get("data") or []
        for item in data:
            created = _parse(item.get("created_at"))
            if since and created and created < since:
                return LookupResult(candidates=candidates, listed=listed)
            listed += 1
            if recipient and recipient not in [str(to).lower() for to in _as_list(item.get("to"))]:
                continue
            if retrievals >= MAX_RETRIEVALS:
                return LookupResult(candidates=candidates, listed=listed, complete=False)
            retrievals += 1
            email = provider.retrieve_email(item["id"])
            tags = email.get("tags")
            if not tags:
                candidates.append(_email(email))
            elif any(tag.get("name") == "outbox_id" and tag.get("value") == tag_value for tag in tags):
                return LookupResult(found=_email(email), candidates=candidates, listed=listed)
        if not page.get("has_more") or not data:
            return LookupResult(candidates=candidates, listed=listed)
        after = data[-1]["id"]
    return LookupResult(candidates=candidates, listed=listed, complete=False)


def _email(email: dict) -> ProviderEmail:
    return ProviderEmail(
        message_id=str(email.get("id")),
        created_at=str(email.get("created_at") or ""),
        last_event=email.get("last_event"),
    )


def _as_list(value) -> list:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _parse(value: str | None) -> datetime | None:
    """Our fixed-width times and the provider's ISO times alike; None when unreadable."""
    if not value:
        return None
    try:
        return clock.parse(value)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(value.replace(" ", "T"))
    except ValueError:
        return None
    return moment if moment.tzinfo else None
