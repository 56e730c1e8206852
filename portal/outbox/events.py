"""One outbox row's history, as a person reads it: what happened, when, and what the engine decided.

The history is written by triggers on email_outbox (migration 0016), in the statement that makes
each change, and by operator.py for a person's actions; the table refuses UPDATE and DELETE.
Receipts and suppressions come from their own tables. Nothing here holds an address or content.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database
from portal.core.i18n import N_
from portal.outbox.statuses import (
    CANCELLED,
    DEAD_LETTER,
    FAILED,
    PENDING,
    PROCESSING,
    RECEIPT_STATUSES,
    RETRY,
    SENT,
    SENT_AGAIN,
    SUPPRESSED,
    UNKNOWN_OUTCOME,
)

ACTION_LABELS = {
    "retry": N_("Retried by an operator"),
    "confirm_sent": N_("Confirmed as sent by an operator"),
    "send_again": N_("Sent again as a new email by an operator"),
    "cancel": N_("Cancelled by an operator"),
}


@dataclass(frozen=True)
class TimelineEntry:
    at: str  # fixed-width UTC ISO
    title: str
    tone: str = ""  # "ok", "warn", "bad" or "" (the badge colour)
    details: list[str] = field(default_factory=list)
    actor: str | None = None  # operator events: who
    reason: str | None = None  # operator events: why, in their words
    related_outbox_id: str | None = None
    related_label: str = N_("The related email")

    @property
    def display_at(self) -> str:
        return display_second(self.at)


def display_second(value: str | None) -> str:
    """A stored time to the second, as a history needs it: 3 Dec 2026, 14:05:09 UTC."""
    try:
        moment = clock.parse(value or "")
    except ValueError:
        return value or ""
    return f"{moment.day} {moment:%b %Y, %H:%M:%S} UTC"


def classify_answer(reason: str | None) -> str:
    """What the provider's answer (as the engine recorded it in last_error) meant for the email."""
    text = reason or ""
    if text.startswith("provider_error"):
        return N_("the provider failed (5xx): retried; it may have sent the email")
    if text == "transport_failure":
        return N_("no answer reached us: retried; the provider may have sent the email")
    if text == "provider_answer_without_id":
        return N_("an answer without a message ID: retried; it may have been sent")
    if text.startswith("rate_limited") or text == "rate_limit_wait":
        return N_("rate limited (429): nothing was sent; retried after the pause")
    if text == "concurrent_idempotent_requests":
        return N_("another request with the same key was in flight (409): retried")
    if text.startswith("provider_rejected"):
        return N_("refused by the provider: nothing was sent")
    if text == "invalid_idempotent_request":
        return N_("the key was used with another payload (409): the outcome is unknown")
    if text == UNKNOWN_OUTCOME:
        return N_("an earlier attempt may have gone out, and the provider's window to tell is over or closing")
    if text.startswith("error:"):
        return N_("failed before reaching the provider: nothing was sent; retried")
    return text


_EVENTS = sa.text(
    """
    SELECT e.*, u.email AS actor_email FROM email_outbox_events e
    LEFT JOIN users u ON u.id = e.actor_user_id
    WHERE e.outbox_id = :id ORDER BY e.id
    """
)
# A row's receipts: those with its message ID, and those its outbox_id tag matched without settling
# it (migrations/0017); each half through an index.
_RECEIPTS = sa.text(
    """
    SELECT id, type, event_created_at, received_at, outcome, source FROM email_receipts
    WHERE provider_message_id = :message_id
    UNION
    SELECT id, type, event_created_at, received_at, outcome, source FROM email_receipts
    WHERE outcome = 'not_eligible' AND outbox_id = :id
    ORDER BY received_at, id
    """
)
_SUPPRESSIONS = sa.text(
    """
    SELECT e.action, e.reason, e.source, e.created_at, u.email AS actor_email FROM email_suppression_events e
    LEFT JOIN users u ON u.id = e.actor_user_id
    WHERE :recipient != '' AND e.email = :recipient ORDER BY e.created_at, e.id
    """
)


def raw_events(db: Database, outbox_id: str) -> list[dict]:
    with db.read() as conn:
        return [dict(row) for row in conn.execute(_EVENTS, {"id": outbox_id}).mappings()]


def timeline(db: Database, row: dict) -> list[TimelineEntry]:
    """The row's history, oldest first: its own events, its receipts, and its address's suppressions."""
    with db.read() as conn:
        events = [dict(e) for e in conn.execute(_EVENTS, {"id": row["id"]}).mappings()]
        receipts = [
            dict(r)
            for r in conn.execute(_RECEIPTS, {"id": row["id"], "message_id": row["provider_message_id"]}).mappings()
        ]
        suppressions = [dict(s) for s in conn.execute(_SUPPRESSIONS, {"recipient": row["recipient"]}).mappings()]
    entries = [_describe(event) for event in _fold(events)]
    entries += [
        TimelineEntry(
            at=r["received_at"],
            title=RECEIPT_WORDS.get(r["type"], f"Receipt from Resend: {r['type']}")
            + (" (learned by asking Resend)" if r["source"] == "lookup" else ""),
            tone="bad" if r["type"] in ("email.bounced", "email.complained", "email.failed") else "ok",
            details=[
                f"receipt {r['type']}" + (", from a lookup" if r["source"] == "lookup" else ""),
                f"applied as: {r['outcome'] or N_('not yet processed')}",
            ],
        )
        for r in receipts
    ]
    entries += [
        TimelineEntry(
            at=s["created_at"],
            title=N_("Address added to the suppression list")
            if s["action"] == "add"
            else N_("Address removed from the suppression list"),
            tone="warn" if s["action"] == "add" else "",
            details=[
                f"by {N_('the email provider') if s['source'] == 'webhook' else s['actor_email'] or N_('an admin')}"
            ],
            reason=s["reason"],
        )
        for s in suppressions
    ]
    return sorted(entries, key=lambda entry: entry.at)


FROZEN = N_("payload frozen: the first request to the provider follows")
# A receipt, in words for an admin (its type stays in the technical detail).
RECEIPT_WORDS = {
    "email.sent": N_("Resend confirmed it sent the email"),
    "email.delivered": N_("Delivered to the recipient's server"),
    "email.delivery_delayed": N_("Delivery delayed: the recipient's server has not taken it yet"),
    "email.bounced": N_("Bounced: the recipient's server refused it"),
    "email.complained": N_("Marked as spam by the recipient"),
    "email.opened": N_("Opened by the recipient"),
    "email.clicked": N_("A link in it was followed"),
    "email.failed": N_("Resend could not send it"),
}


def _fold(events: list[dict]) -> list[dict]:
    """Drop the trigger's record of a change an operator event right after it describes in full."""
    kept = []
    for index, event in enumerate(events):
        following = events[index + 1] if index + 1 < len(events) else None
        if (
            event["kind"] == "changed"
            and following is not None
            and following["kind"] == "operator"
            and following["status_before"] == event["status_before"]
            and following["status_after"] == event["status_after"]
        ):
            continue
        kept.append(event)
    return kept


def _describe(event: dict) -> TimelineEntry:
    at, kind = event["created_at"], event["kind"]
    before, after = event["status_before"], event["status_after"]
    if kind == "created":
        return TimelineEntry(
            at, N_("Written, waiting to be sent"), details=[f"committed to the outbox; status: {after}"]
        )
    if kind == "erased":
        return TimelineEntry(
            at, N_("Recipient and content erased (retention)"), details=[N_("the status and times stay")]
        )
    if kind == "operator":
        details = [f"status: {before} → {after}"] if before else [f"status: {after}"]
        if event["provider_message_id"] and event["action"] == "confirm_sent":
            details.append(f"provider message ID: {event['provider_message_id']}")
        title, related_label = ACTION_LABELS.get(event["action"], event["action"]), N_("The new email")
        if event["action"] == "send_again" and before is None:
            # The new row's own record: it exists because a person sent the old one again.
            title, related_label = (
                N_("Written by an operator to send again an email whose outcome was unknown"),
                N_("The email it replaces"),
            )
        return TimelineEntry(
            at,
            title,
            tone="warn",
            details=details,
            actor=event["actor_email"],
            reason=event["reason"],
            related_outbox_id=event["related_outbox_id"],
            related_label=related_label,
        )
    return _describe_change(event)


def _describe_change(event: dict) -> TimelineEntry:
    at = event["created_at"]
    before, after, error = event["status_before"], event["status_after"], event["last_error"]
    attempt = event["attempt"]
    may_have_gone = [N_("an attempt may have reached the provider")] if event["outcome_unknown"] else []
    if event["first_attempt"] and before == after == PROCESSING:
        # Frozen after its claim, in a statement of its own (freeze.freeze_or_replay).
        return TimelineEntry(at, N_("Content fixed for sending"), details=[FROZEN])
    if after == PROCESSING and event["published"]:
        return TimelineEntry(
            at,
            N_("Queued again: an attempt stopped without an answer"),
            "warn",
            [N_("republished by the relay: claim expired")],
        )
    if after == PROCESSING and before == PROCESSING:
        return TimelineEntry(
            at,
            f"Sending again (attempt {attempt}): the attempt before stopped without an answer",
            "warn",
            [N_("claim expired; claimed again"), *may_have_gone],
        )
    if after == PROCESSING:
        # A first attempt's claim also freezes its payload, in the same statement (claims.py).
        details = [N_("claimed by a worker"), FROZEN if event["first_attempt"] else ""]
        return TimelineEntry(at, f"Being sent (attempt {attempt})", details=[d for d in details if d])
    if event["provider_message_id"] and after in (SENT, *RECEIPT_STATUSES) and before in (PROCESSING, RETRY, PENDING):
        return TimelineEntry(
            at,
            N_("Handed to Resend"),
            "ok",
            [f"accepted at attempt {attempt}", f"message ID {event['provider_message_id']}"],
        )
    if after in RECEIPT_STATUSES and before in RECEIPT_STATUSES:
        return TimelineEntry(
            at, f"Status now {after}", "bad" if after in ("bounced", "complained") else "ok", [N_("from a receipt")]
        )
    if after == RETRY:
        details = [f"attempt {attempt}: {error or 'retry'}", classify_answer(error)]
        if event["next_attempt_at"]:
            details.append(f"next attempt at {display_second(event['next_attempt_at'])}")
        if before == PROCESSING:
            return TimelineEntry(at, N_("Not sent this time; it will be tried again"), "warn", details)
        if event["published"]:
            return TimelineEntry(
                at, N_("Queued for its next attempt"), details=[f"republished by the relay after attempt {attempt}"]
            )
        return TimelineEntry(at, N_("Retry time changed"), details=details[2:])
    if after == PENDING and error and error.startswith("publish_failed"):
        return TimelineEntry(at, N_("Not queued yet; it will be queued again by itself"), "warn", [error])
    if event["published"]:
        title = N_("Queued for sending") if before == PENDING else N_("Queued again")
        return TimelineEntry(
            at, title, details=[N_("published to the queue") if before == PENDING else N_("republished by the relay")]
        )
    if after in (FAILED, SUPPRESSED, DEAD_LETTER, CANCELLED):
        tone = "warn" if after in (DEAD_LETTER, CANCELLED) else "bad"
        details = [f"attempt {attempt}: {error}" if attempt else str(error), classify_answer(error), *may_have_gone]
        titles = {
            FAILED: N_("Failed: nothing was sent"),
            SUPPRESSED: N_("Not sent: the address is suppressed"),
            DEAD_LETTER: N_("Dead letter: needs a person") if error != SENT_AGAIN else N_("Marked as sent again"),
            CANCELLED: N_("Cancelled before any attempt"),
        }
        return TimelineEntry(at, titles[after], tone, [d for d in details if d])
    return TimelineEntry(at, f"Status: {before} → {after}" if before != after else N_("Updated"), details=[error or ""])
