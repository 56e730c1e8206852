"""Asking the provider about the accepted emails whose delivery receipt never came.

The reconciliation counts an email the provider accepted more than OUTBOX_NO_RECEIPT_HOURS ago,
with no delivery receipt, as "no receipt". A worker's pass asks the provider about each
(`GET /emails/{id}`) and records what it says as a receipt whose source is `lookup`; the row then
moves by the same rules as a webhook receipt (receipts.py). What the provider says:

- a last event that is a receipt (delivered, bounced, complained, delivery_delayed, failed,
  suppressed): recorded and applied, once (the same answer again is a duplicate);
- sent, queued, scheduled: it knows no more than we do; nothing changes;
- a 404, an answer without a readable last event, a 429, an unanswered request: nothing changes.

The answer names the last event, not when it happened: Resend's GET /emails/{id} carries the
email's created_at and last_event, no event time. So a lookup's receipt is dated the earliest the
event can have happened: the row's last receipt if it has one (the event came after it), otherwise
the email's acceptance (the provider's created_at or our sent_at, whichever is earlier). It still
moves the row it was asked about (equally new, higher-ranked), but every receipt the webhook brings
about a later event is newer, so it is never overruled by the lookup: a bounce or complaint dated
before the pass but received after it still moves a row a lookup found delivered. Dated with the
pass's start, the lookup's `delivered` would outlast them.

Every ask is noted in `email_lookups` (when, how often, what came back), and an email is asked
again only after ASK_AGAIN_HOURS. Politely: at most OUTBOX_LOOKUPS_PER_HOUR asks an hour across all
workers (a moving window in Redis), each after a slot of the shared send limit taken without
waiting for it: when sending has the provider's every slot, the pass stops and sends go first. A
429 or a transport failure ends the pass too.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from limits import RateLimitItemPerHour
from limits.storage import RedisStorage
from limits.strategies import MovingWindowRateLimiter
from resend.exceptions import ResendError

from portal.core import clock
from portal.core.db import Database
from portal.outbox.ground.periodic import PeriodicTask
from portal.outbox.ground.statuses import OUTCOME_UNKNOWN, SENT
from portal.outbox.hear.receipt_events import Receipt, event_time
from portal.outbox.hear.receipts import apply_receipt
from portal.outbox.hear.reconciliation import NO_RECEIPT
from portal.outbox.send.rate_limit import rate_limit_for

log = logging.getLogger("portal.worker")

LOOKUP_SOURCE = "lookup"
ASK_AGAIN_HOURS = 6
PASS_INTERVAL_SECONDS = 600
# A send slot is taken only if one is free now: a lookup never makes a send wait.
SLOT_WAIT_SECONDS = 0.05
LAST_EVENT_RECEIPTS = {
    "delivered": "email.delivered",
    "bounced": "email.bounced",
    "complained": "email.complained",
    "delivery_delayed": "email.delivery_delayed",
    "failed": "email.failed",
    "suppressed": "email.suppressed",
}
NOTHING_NEW = {"sent", "queued", "scheduled"}
# Why a pass stopped before its list was done.
HOURLY_BUDGET_SPENT, SENDING_FIRST, PROVIDER_BUSY, PROVIDER_UNREACHABLE = (
    "hourly_budget_spent",
    "sending_first",
    "provider_rate_limited",
    "provider_unreachable",
)

_CANDIDATES = sa.text(
    f"""
    SELECT o.id, o.provider_message_id, o.sent_at, o.last_event_at FROM email_outbox o
    LEFT JOIN email_lookups l ON l.outbox_id = o.id
    WHERE {NO_RECEIPT}
      AND (l.asked_at IS NULL OR l.asked_at <= :ask_again_before)
    ORDER BY o.sent_at, o.id LIMIT :limit
    """
)
_NOTE_ASK = sa.text(
    """
    INSERT INTO email_lookups (outbox_id, asked_at, asks, answer) VALUES (:id, :now, 1, :answer)
    ON CONFLICT (outbox_id) DO UPDATE SET asked_at = excluded.asked_at, asks = asks + 1, answer = excluded.answer
    """
)


# The emails still without an answer, newest first, for a person: accepted with no delivery receipt
# past the threshold (with what the lookups found), or an unknown outcome a person must settle.
_UNEXPLAINED = sa.text(
    f"""
    SELECT o.id, o.family, o.recipient, o.created_at, o.sent_at, l.asks, l.answer, l.asked_at,
           o.status = '{SENT}' AS no_receipt
    FROM email_outbox o LEFT JOIN email_lookups l ON l.outbox_id = o.id
    WHERE ({NO_RECEIPT}) OR ({OUTCOME_UNKNOWN})
    ORDER BY o.created_at DESC, o.id LIMIT :limit
    """
)


def unexplained_emails(db: Database, *, no_receipt_hours: int, now: datetime, limit: int = 50) -> list[dict]:
    params = {"no_receipt_before": clock.iso(now - timedelta(hours=no_receipt_hours)), "limit": limit}
    with db.read() as conn:
        return [dict(row) for row in conn.execute(_UNEXPLAINED, params).mappings()]


@dataclass(frozen=True)
class LookupPass:
    # What the provider said of each email asked, in the order asked: (outbox ID, answer code).
    answers: tuple[tuple[str, str], ...]
    learned: int  # answers recorded as receipts
    stopped: str | None  # why the pass ended early; None: every due email was asked

    @property
    def asked(self) -> int:
        return len(self.answers)

    def summary(self) -> str:
        ended = f"; stopped: {self.stopped}" if self.stopped else ""
        return f"{self.asked} asked, {self.learned} receipts learned{ended}"


@dataclass(frozen=True)
class DueEmail:
    outbox_id: str
    message_id: str
    sent_at: str  # when we recorded the provider's acceptance
    last_event_at: str | None  # the last receipt applied to the row (an email.sent), if any


def emails_to_ask(db: Database, *, no_receipt_hours: int, now: datetime, limit: int) -> list[DueEmail]:
    """The accepted emails without a receipt that are due a question."""
    params = {
        "no_receipt_before": clock.iso(now - timedelta(hours=no_receipt_hours)),
        "ask_again_before": clock.iso(now - timedelta(hours=ASK_AGAIN_HOURS)),
        "limit": limit,
    }
    with db.read() as conn:
        return [DueEmail(*row) for row in conn.execute(_CANDIDATES, params)]


def look_up_missing_receipts(ctx, *, now: datetime, limit: int | None = None) -> LookupPass:
    """One pass at `now`: ask about the due emails, oldest acceptance first, within the budgets."""
    settings = ctx.settings
    per_pass = limit or max(1, settings.outbox_lookups_per_hour * PASS_INTERVAL_SECONDS // 3600)
    due = emails_to_ask(ctx.db, no_receipt_hours=settings.outbox_no_receipt_hours, now=now, limit=per_pass)
    hourly = _hourly_budget(ctx.redis, settings.redis_url)
    per_hour = RateLimitItemPerHour(settings.outbox_lookups_per_hour)
    sends = rate_limit_for(ctx.redis, settings.redis_url, settings.resend_rate_limit_per_second)
    learned = 0
    answers: list[tuple[str, str]] = []
    for row in due:
        if not hourly.hit(per_hour, "asks"):
            return LookupPass(tuple(answers), learned, HOURLY_BUDGET_SPENT)
        if not sends.acquire(time.monotonic() + SLOT_WAIT_SECONDS):
            return LookupPass(tuple(answers), learned, SENDING_FIRST)
        answer, email = _ask(ctx.provider, row.message_id)
        answers.append((row.outbox_id, answer))
        receipt_type = LAST_EVENT_RECEIPTS.get(answer)
        if receipt_type is not None:
            receipt = _receipt(receipt_type, row, email, settings.portal_env)
            apply_receipt(ctx.db, receipt, environment=settings.portal_env, now=now)
            learned += 1
        with ctx.db.write() as conn:
            conn.execute(_NOTE_ASK, {"id": row.outbox_id, "now": clock.iso(now), "answer": answer})
        if answer in (PROVIDER_BUSY, PROVIDER_UNREACHABLE):
            return LookupPass(tuple(answers), learned, answer)
    return LookupPass(tuple(answers), learned, None)


def _ask(provider, message_id: str) -> tuple[str, dict | None]:
    """The provider's last event for the email, or why there is none (never its message: it can
    carry an address)."""
    try:
        email = provider.retrieve_email(message_id)
    except (ResendError, RuntimeError) as error:
        return why_unanswered(error), None
    last_event = email.get("last_event") if isinstance(email, dict) else None
    if not isinstance(last_event, str) or not (last_event in LAST_EVENT_RECEIPTS or last_event in NOTHING_NEW):
        return "unreadable_answer", None
    return last_event, email


def why_unanswered(error: ResendError | RuntimeError) -> str:
    """Why a request to the provider brought no answer, as a code (never the provider's message: it
    can carry an address): busy (429), unreachable, not_found, or provider_error_<status>."""
    if isinstance(error, RuntimeError):  # the transport failed before the SDK saw it
        return PROVIDER_UNREACHABLE
    code = str(getattr(error, "code", ""))
    if getattr(error, "error_type", "") == "HttpClientError":  # the SDK's word for a failed transport
        return PROVIDER_UNREACHABLE
    if code == "429":
        return PROVIDER_BUSY
    return "not_found" if code == "404" else f"provider_error_{code or 'unknown'}"


def _receipt(receipt_type: str, row: DueEmail, email: dict, environment: str) -> Receipt:
    to = email.get("to")
    first = to[0] if isinstance(to, list) and to else to if isinstance(to, str) else None
    return Receipt(
        # The same answer about the same email is one receipt: asked again, it is a duplicate.
        event_id=f"{LOOKUP_SOURCE}:{row.message_id}:{receipt_type}",
        type=receipt_type,
        email_id=row.message_id,
        environment=environment,
        outbox_id=row.outbox_id,
        event_at=_earliest_possible(row, email),
        recipient=first.strip().lower() if isinstance(first, str) and first.strip() else None,
        bounce_type=None,  # the provider's record of an email does not say
        source=LOOKUP_SOURCE,
    )


def _earliest_possible(row: DueEmail, email: dict) -> str:
    """The instant a lookup's receipt carries: the earliest its event can have happened (see the
    module's docstring), never the pass's: a lookup never overrules a receipt about a later event."""
    if row.last_event_at is not None:
        return row.last_event_at
    created = event_time(email.get("created_at"))
    return min(row.sent_at, created, key=clock.parse) if created else row.sent_at


def _hourly_budget(redis, redis_url: str) -> MovingWindowRateLimiter:
    storage = RedisStorage(redis_url, connection_pool=redis.connection_pool, key_prefix="portal-lookups")
    return MovingWindowRateLimiter(storage)


def lookup_task(settings) -> PeriodicTask:
    """The pass as the worker runs it: at most once every PASS_INTERVAL_SECONDS across all workers.

    Its first pass is due when a worker starts, so a worker restarted more often than the interval
    (a deploy a few times an hour) still asks. The lock is left to expire rather than released after
    the pass: whichever worker passes first holds it for the interval, and the others, started
    with it or after, find it taken; workers started together never ask twice in one interval."""
    return PeriodicTask(
        "receipt-lookups",
        PASS_INTERVAL_SECONDS,
        _lookup_once,
        lock_seconds=PASS_INTERVAL_SECONDS,
        release_after_pass=False,
        first_pass_at_start=True,
    )


def _lookup_once(ctx, now: datetime) -> None:
    result = look_up_missing_receipts(ctx, now=now)
    if result.asked or result.stopped:
        log.info("receipt lookups: %s", result.summary())
