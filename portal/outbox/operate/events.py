"""One outbox row's history, as codes: what happened, when, and the values that say how.

The history is written by triggers on email_outbox (migration 0016), in the statement that makes
each change, and by actions.py for a person's actions; the table refuses UPDATE and DELETE. What
it stores are codes (statuses before and after, the reason code in last_error, flags), so each
entry here is a kind and its values, never a sentence: the console words them in the reader's
language (portal/console/words.py, which a test holds to every kind below). Receipts and
suppressions come from their own tables. Nothing here holds an address or content.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.core.db import Database
from portal.outbox.ground.statuses import (
    CANCELLED,
    DEAD_LETTER,
    ENQUEUED,
    FAILED,
    PENDING,
    PROCESSING,
    RECEIPT_STATUSES,
    RETRY,
    SENT,
    SENT_AGAIN,
    SUPPRESSED,
)

# The kinds of entry a history holds, in the order of an email's life.
WRITTEN = "written"  # committed to the outbox
WRITTEN_AND_QUEUED = "written_and_queued"  # committed, and published right after the commit (intents.py)
WRITTEN_TO_SEND_AGAIN = "written_to_send_again"  # a person sent an email of unknown outcome again: this is the new one
QUEUED = "queued"  # published to the queue
NOT_QUEUED = "not_queued"  # the publication failed; the relay publishes it later
QUEUED_AGAIN = "queued_again"  # republished by the relay
BEING_SENT = "being_sent"  # claimed for an attempt (a first attempt also freezes its content)
CONTENT_FIXED = "content_fixed"  # the content frozen after its claim, in a statement of its own
SENDING_AGAIN = "sending_again"  # claimed again: the attempt before stopped without an answer
REQUEUED_AFTER_STOP = "requeued_after_stop"  # republished: the attempt before stopped without an answer
WILL_RETRY = "will_retry"  # an attempt ended without sending for sure; another follows
QUEUED_FOR_NEXT_ATTEMPT = "queued_for_next_attempt"  # a waiting retry republished by the relay
RETRY_TIME_CHANGED = "retry_time_changed"
ACCEPTED = "accepted"  # the provider took it and gave its message ID
STATUS_FROM_RECEIPT = "status_from_receipt"  # a receipt moved the status (delivered, bounced, ...)
NOT_SENT_FAILED = "failed"
NOT_SENT_SUPPRESSED = "suppressed"
DEAD_LETTERED = "dead_letter"
MARKED_SENT_AGAIN = "marked_sent_again"  # the old email's record once a person sent it again
CANCELLED_BEFORE_ATTEMPT = "cancelled"
RETRIED_BY_OPERATOR = "retried_by_operator"
CONFIRMED_BY_OPERATOR = "confirmed_by_operator"
SENT_AGAIN_BY_OPERATOR = "sent_again_by_operator"
CANCELLED_BY_OPERATOR = "cancelled_by_operator"
ERASED = "erased"  # recipient and content erased; the status and times stay
RECEIPT = "receipt"  # a receipt from the provider, applied or not
SUPPRESSION_ADDED = "suppression_added"
SUPPRESSION_REMOVED = "suppression_removed"
STATUS_CHANGED = "status_changed"  # any other change of status
UPDATED = "updated"  # any other change

KINDS = (
    WRITTEN,
    WRITTEN_AND_QUEUED,
    WRITTEN_TO_SEND_AGAIN,
    QUEUED,
    NOT_QUEUED,
    QUEUED_AGAIN,
    BEING_SENT,
    CONTENT_FIXED,
    SENDING_AGAIN,
    REQUEUED_AFTER_STOP,
    WILL_RETRY,
    QUEUED_FOR_NEXT_ATTEMPT,
    RETRY_TIME_CHANGED,
    ACCEPTED,
    STATUS_FROM_RECEIPT,
    NOT_SENT_FAILED,
    NOT_SENT_SUPPRESSED,
    DEAD_LETTERED,
    MARKED_SENT_AGAIN,
    CANCELLED_BEFORE_ATTEMPT,
    RETRIED_BY_OPERATOR,
    CONFIRMED_BY_OPERATOR,
    SENT_AGAIN_BY_OPERATOR,
    CANCELLED_BY_OPERATOR,
    ERASED,
    RECEIPT,
    SUPPRESSION_ADDED,
    SUPPRESSION_REMOVED,
    STATUS_CHANGED,
    UPDATED,
)

# An operator's action, as actions.py stores it in the event's `action`, and the kind of its entry
# (tests/outbox/test_events.py holds these to actions.ACTIONS).
BY_OPERATOR = {
    "retry": RETRIED_BY_OPERATOR,
    "confirm_sent": CONFIRMED_BY_OPERATOR,
    "send_again": SENT_AGAIN_BY_OPERATOR,
    "cancel": CANCELLED_BY_OPERATOR,
}


@dataclass(frozen=True)
class TimelineEntry:
    """One entry: its kind (one of KINDS) and the values its words need; fields a kind has no use
    for stay empty."""

    at: str  # fixed-width UTC ISO
    kind: str
    attempt: int | None = None  # the row's attempt count after the change
    status_before: str | None = None
    status: str | None = None  # after the change
    reason: str | None = None  # the reason code (last_error up to its first ':'): provider_error, ...
    error: str | None = None  # last_error as stored: the code and its values (provider_error: 500 ...)
    message_id: str | None = None  # the provider's
    next_attempt_at: str | None = None
    outcome_unknown: bool = False  # an attempt may have reached the provider without its answer reaching us
    content_fixed: bool = False  # this change froze the content: the first request to the provider follows
    receipt_type: str | None = None  # email.delivered, ...
    receipt_outcome: str | None = None  # what the receipt did to the row (None: not yet processed)
    bounce_class: str | None = None  # a bounce receipt's class (ground/bounce_classes.py)
    from_lookup: bool = False  # the receipt came from asking the provider, not from its webhook
    by_provider: bool = False  # a suppression the provider's receipt made
    actor: str | None = None  # the person who acted (their address)
    note: str | None = None  # a person's own words: an operator's reason, a suppression's
    related_outbox_id: str | None = None  # send again: the new email, or the one the new email replaces


def reason_code(error: str | None) -> str | None:
    """The code of a stored reason: `provider_error` of `provider_error: 500 application_error`."""
    if not error:
        return None
    return error.partition(":")[0].strip() or None


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
    SELECT id, type, event_created_at, received_at, outcome, source, bounce_class FROM email_receipts
    WHERE provider_message_id = :message_id
    UNION
    SELECT id, type, event_created_at, received_at, outcome, source, bounce_class FROM email_receipts
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
            kind=RECEIPT,
            receipt_type=r["type"],
            receipt_outcome=r["outcome"],
            bounce_class=r["bounce_class"],
            from_lookup=r["source"] == "lookup",
        )
        for r in receipts
    ]
    entries += [
        TimelineEntry(
            at=s["created_at"],
            kind=SUPPRESSION_ADDED if s["action"] == "add" else SUPPRESSION_REMOVED,
            by_provider=s["source"] == "webhook",
            actor=s["actor_email"],
            note=s["reason"],
        )
        for s in suppressions
    ]
    return sorted(entries, key=lambda entry: entry.at)


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
    """A stored event as an entry: its kind, read from the statuses and flags the trigger stored."""
    values = {
        "at": event["created_at"],
        "attempt": event["attempt"],
        "status_before": event["status_before"],
        "status": event["status_after"],
    }
    if event["kind"] == "created":
        return TimelineEntry(kind=WRITTEN_AND_QUEUED if event["status_after"] == ENQUEUED else WRITTEN, **values)
    if event["kind"] == "erased":
        return TimelineEntry(kind=ERASED, **values)
    if event["kind"] == "operator":
        kind = BY_OPERATOR.get(event["action"], STATUS_CHANGED)
        if kind == SENT_AGAIN_BY_OPERATOR and event["status_before"] is None:
            kind = WRITTEN_TO_SEND_AGAIN  # the new row's own record: a person sent the old one again
        return TimelineEntry(
            kind=kind,
            message_id=event["provider_message_id"] if kind == CONFIRMED_BY_OPERATOR else None,
            actor=event["actor_email"],
            note=event["reason"],
            related_outbox_id=event["related_outbox_id"],
            **values,
        )
    error = event["last_error"]
    return TimelineEntry(
        kind=_change_kind(event),
        reason=reason_code(error),
        error=error,
        message_id=event["provider_message_id"],
        next_attempt_at=event["next_attempt_at"],
        outcome_unknown=bool(event["outcome_unknown"]),
        content_fixed=bool(event["first_attempt"]),
        **values,
    )


def _change_kind(event: dict) -> str:
    """What a change the trigger recorded was, from the statuses before and after and its flags."""
    before, after, published = event["status_before"], event["status_after"], event["published"]
    if event["first_attempt"] and before == after == PROCESSING:
        return CONTENT_FIXED  # frozen after its claim, in a statement of its own (freeze.freeze_or_replay)
    if after == PROCESSING and published:
        return REQUEUED_AFTER_STOP
    if after == PROCESSING and before == PROCESSING:
        return SENDING_AGAIN
    if after == PROCESSING:
        return BEING_SENT  # a first attempt's claim also freezes its content, in the same statement
    if event["provider_message_id"] and after in (SENT, *RECEIPT_STATUSES) and before in (PROCESSING, RETRY, PENDING):
        return ACCEPTED
    if after in RECEIPT_STATUSES and before in RECEIPT_STATUSES:
        return STATUS_FROM_RECEIPT
    if after == RETRY:
        if before == PROCESSING:
            return WILL_RETRY
        return QUEUED_FOR_NEXT_ATTEMPT if published else RETRY_TIME_CHANGED
    if after == PENDING and reason_code(event["last_error"]) == PUBLISH_FAILED:
        return NOT_QUEUED
    if published:
        return QUEUED if before == PENDING else QUEUED_AGAIN
    if after == DEAD_LETTER:
        return MARKED_SENT_AGAIN if event["last_error"] == SENT_AGAIN else DEAD_LETTERED
    if after in _SETTLED_UNSENT:
        return _SETTLED_UNSENT[after]
    return STATUS_CHANGED if before != after else UPDATED


_SETTLED_UNSENT = {
    FAILED: NOT_SENT_FAILED,
    SUPPRESSED: NOT_SENT_SUPPRESSED,
    CANCELLED: CANCELLED_BEFORE_ATTEMPT,
}
PUBLISH_FAILED = "publish_failed"  # the reason code publish.py stores when a publication fails
