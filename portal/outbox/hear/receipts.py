"""Applying a provider receipt to the outbox, once, in one transaction.

The webhook verifies the signature and hands the raw event to `apply_receipt_event`: read it,
then apply it. `apply_receipt` moves the outbox row, suppresses a bounced or complained address
and, last, records the receipt as processed with its outcome (INSERT ... ON CONFLICT
(provider_event_id) DO UPDATE ... WHERE processed_at IS NULL), all in one `db.write()`. Every
statement before that record carries the guard "no processed receipt with this event ID"
(rows.RECEIPT_UNPROCESSED), and the record changes nothing for a receipt processed before, so a
redelivered receipt whose first delivery committed changes nothing and is answered as a
duplicate, and one whose first delivery rolled back applies once. The common receipt (a
delivery report for a row we sent) costs two statements: the guarded UPDATE, and the record.

Which status may replace which:

    sent < delivered < bounced = complained

A row moves only when the event is not older than its last_event_at (by julianday) and its status
ranks at least as high as the row's: newer or equally new, and never back to an earlier status.
A bounce and a complaint are both the last word on an email and both stop mail to the address, so
neither outranks the other and time decides between them. Two contradictory receipts where the
higher-ranked one is older (a bounce dated before a delivery) leave the row at whichever arrived
first; both receipts are kept, with their outcome, for a person to read.
"""

from __future__ import annotations

from datetime import datetime

from portal.core import clock
from portal.core.db import Database
from portal.core.driver import Statement
from portal.outbox.ground import bounce_classes, metrics
from portal.outbox.ground.erased import ERASED_ROW
from portal.outbox.ground.rows import advance_on_receipt, settle_from_receipt_tag
from portal.outbox.ground.statuses import (
    BOUNCED,
    COMPLAINED,
    DELIVERED,
    FAILED,
    RECEIPT_RANK,
    RECEIPT_STATUSES,
    SENT,
    SUPPRESSED,
)
from portal.outbox.hear.receipt_events import MalformedReceipt, Receipt, parse_receipt
from portal.outbox.hear.suppressions import PROVIDER_EVENTS, follow_provider_list, suppress_from_receipt

# Event type -> the outbox status it reports (None: recorded, but says nothing about status).
EVENT_STATUS = {
    "email.sent": SENT,
    "email.delivered": DELIVERED,
    "email.delivery_delayed": None,
    "email.bounced": BOUNCED,
    "email.complained": COMPLAINED,
    # As Resend documents them: the provider could not send the email (email.failed), or did not
    # because the address is on its own suppression list (email.suppressed). Nothing went out.
    "email.failed": FAILED,
    "email.suppressed": SUPPRESSED,
}
SUPPRESSING_EVENTS = {
    "email.bounced": "bounced (permanent)",  # a hard bounce; a soft one: SOFT_BOUNCES_REASON
    "email.complained": "complained",
    "email.suppressed": "suppressed by the provider",
}

# What happened to a receipt: the `outcome` column, and the webhook's answer.
APPLIED = "applied"  # the outbox row moved (or was settled through its outbox_id tag)
STALE = "stale"  # our row, but older or lower-ranked than its state: nothing moved
NOT_ELIGIBLE = "not_eligible"  # our row, in a state no receipt may change (e.g. failed)
NO_STATUS_CHANGE = "no_status_change"  # our row; the event carries no status (email.delivery_delayed)
UNMATCHED = "unmatched"  # our environment, but no outbox row of ours: stored, ignored
OTHER_ENVIRONMENT = "other_environment"  # another environment's mail: counted, not applied, no payload kept
IGNORED_TYPE = "ignored_type"  # an event type we do not act on (opened, clicked, contact.*)
UNDATED = "undated"  # no usable created_at: it cannot be ordered, so it is not applied
DUPLICATE = "duplicate"  # answer only: this event was processed before
OUTCOMES = (APPLIED, STALE, NOT_ELIGIBLE, NO_STATUS_CHANGE, UNMATCHED, OTHER_ENVIRONMENT, IGNORED_TYPE, UNDATED)

assert {status for status in EVENT_STATUS.values() if status} == set(RECEIPT_RANK)

# Only the fields the portal reads are kept (Receipt.kept_fields), and none for an event type we
# ignore or another environment's mail; retention.py deletes them after RECEIPT_RETENTION_DAYS.
# The receipt is stored already processed, the transaction's last statement; a row stored
# unprocessed (by an older version that stored first) is completed, never one processed before.
# The receipts face: what the webhook area uses (portal.outbox.FACES).
__all__ = ["DUPLICATE", "OUTCOMES", "MalformedReceipt", "apply_receipt_event"]

# A receipt about an erased email (its row holds a pseudonym, or nothing) is kept without the
# address: linked to the row, it would name the pseudonym in every table.
_RECORD_RECEIPT = Statement(
    f"""
    INSERT INTO email_receipts (provider_event_id, type, provider_message_id, event_created_at,
                                environment, payload, received_at, processed_at, outcome, outbox_id, source,
                                bounce_class)
    VALUES (:event_id, :type, :email_id, :event_at, :environment,
            CASE WHEN EXISTS (SELECT 1 FROM email_outbox WHERE id = :outbox_id AND {ERASED_ROW})
                 THEN :unnamed_payload ELSE :payload END,
            :now, :now, :outcome, :outbox_id, :source, :bounce_class)
    ON CONFLICT (provider_event_id) DO UPDATE
    SET processed_at = excluded.processed_at, outcome = excluded.outcome, outbox_id = excluded.outbox_id
    WHERE email_receipts.processed_at IS NULL
    """
)
SOFT_BOUNCES_REASON = (
    f"bounced ({bounce_classes.SOFT_BOUNCES_TO_SUPPRESS} soft bounces within "
    f"{bounce_classes.SOFT_BOUNCE_WINDOW_DAYS} days)"
)
# The address's other soft bounces within the window either side of this one (by the events' own
# times, so the order they arrive in does not matter): its outbox rows by recipient (an erased
# address's rows share one pseudonym), their receipts by row. This receipt is not among them: it
# is recorded last, and a redelivery of a processed one changes nothing (RECEIPT_UNPROCESSED).
_OTHER_SOFT_BOUNCES = Statement(
    f"""
    SELECT COUNT(*) FROM email_outbox o JOIN email_receipts r ON r.outbox_id = o.id
    WHERE o.recipient = (SELECT recipient FROM email_outbox WHERE id = :outbox_id)
      AND r.bounce_class IN {bounce_classes.SOFT_SQL}
      AND abs(julianday(r.event_created_at) - julianday(COALESCE(:event_at, :now)))
          <= {bounce_classes.SOFT_BOUNCE_WINDOW_DAYS}
    """
)
_FIND_BY_MESSAGE_ID = Statement("SELECT id, status FROM email_outbox WHERE provider_message_id = :email_id")
_FIND_BY_ID = Statement("SELECT id FROM email_outbox WHERE id = :outbox_id")


def apply_receipt_event(
    db: Database, event_id: str, body: bytes, *, environment: str, now: datetime, secret_key: str | None = None
) -> str:
    """A verified receipt as the webhook received it at `now`; raises MalformedReceipt (400); returns the outcome.

    With `secret_key` (the portal's, for erased addresses' keyed hashes), Resend's suppression.added
    and suppression.removed events move the portal's suppression list; without it they are ignored."""
    receipt = parse_receipt(event_id, body)
    if receipt.type in PROVIDER_EVENTS and secret_key is not None:
        return apply_suppression_event(db, receipt, secret_key=secret_key, now=now)
    return apply_receipt(db, receipt, environment=environment, now=now)


def apply_suppression_event(db: Database, receipt: Receipt, *, secret_key: str, now: datetime) -> str:
    """Resend's team-wide list changed: the portal's follows (whatever the environment: the list is
    the team's), once. The receipt is kept without its address (no payload)."""
    params = {"event_id": receipt.event_id, "now": clock.iso(now), "email_id": None, "event_at": receipt.event_at}
    with db.write() as conn:
        outcome = NO_STATUS_CHANGE  # already on the list, or not on it: nothing to follow
        if receipt.recipient is not None and follow_provider_list(
            conn, params, event_type=receipt.type, email=receipt.recipient, secret_key=secret_key
        ):
            outcome = APPLIED
        if not _mark_processed(conn, receipt, outcome, None, params, keep=False):
            return DUPLICATE
    metrics.receipt_processed(receipt.type, outcome)
    return outcome


def apply_receipt(db: Database, receipt: Receipt, *, environment: str, now: datetime) -> str:
    ours = receipt.environment == environment
    params = {
        "event_id": receipt.event_id,
        "now": clock.iso(now),
        "email_id": receipt.email_id,
        "event_at": receipt.event_at,
    }
    with db.write() as conn:
        outbox_id = None
        if receipt.type not in EVENT_STATUS:
            outcome = IGNORED_TYPE
        elif not ours:
            outcome = OTHER_ENVIRONMENT
        elif receipt.event_at is None:
            # It cannot be ordered against the row's other receipts, so the row does not move;
            # but a bounce or complaint is a fact about the address whenever it happened.
            outcome, outbox_id = UNDATED, _FIND_BY_MESSAGE_ID(conn, params).scalar()
            if outbox_id is not None:
                _suppress_recipient(conn, receipt, outbox_id, params)
        else:
            outcome, outbox_id = _apply_to_outbox(conn, receipt, params)
            if outbox_id is not None:
                _suppress_recipient(conn, receipt, outbox_id, params)
        if not _mark_processed(conn, receipt, outcome, outbox_id, params, keep=ours and receipt.type in EVENT_STATUS):
            return DUPLICATE
    metrics.receipt_processed(receipt.type, outcome)
    return outcome


def _apply_to_outbox(conn, receipt: Receipt, params: dict) -> tuple[str, str | None]:
    """Move the matched row; return the outcome and the row's ID (None: not one of ours)."""
    status = EVENT_STATUS[receipt.type]
    if receipt.email_id is None:
        return UNMATCHED, None
    if status is not None:
        # The common case first, in one statement: our row, and the receipt moves it.
        moved = advance_on_receipt(conn, params, status)
        if moved is not None:
            return APPLIED, moved
    matched = _FIND_BY_MESSAGE_ID(conn, params).first()
    if matched is not None:
        if matched.status not in RECEIPT_STATUSES:
            return NOT_ELIGIBLE, matched.id
        return (STALE if status is not None else NO_STATUS_CHANGE), matched.id
    if receipt.outbox_id is not None:
        tagged = _FIND_BY_ID(conn, {"outbox_id": receipt.outbox_id}).scalar()
        if tagged is not None:
            # The provider accepted this row's email, though we never recorded its answer.
            settled = settle_from_receipt_tag(conn, params, tagged, status or SENT)
            return (APPLIED if settled else NOT_ELIGIBLE), tagged
    return UNMATCHED, None


def _suppress_recipient(conn, receipt: Receipt, outbox_id: str, params: dict) -> None:
    """A hard bounce (any class but mailbox full and temporary, an untyped one included), a
    complaint, or the second soft bounce within SOFT_BOUNCE_WINDOW_DAYS puts the address on the
    suppression list (as its keyed hash when the email was erased: suppressions.py).

    It applies whether or not the row's status moved: an old bounce is still a fact about the address.
    """
    reason = SUPPRESSING_EVENTS.get(receipt.type)
    if reason is None or receipt.recipient is None:
        return
    if bounce_classes.is_soft(receipt.bounce_class):
        others = _OTHER_SOFT_BOUNCES(conn, {**params, "outbox_id": outbox_id}).scalar()
        if others + 1 < bounce_classes.SOFT_BOUNCES_TO_SUPPRESS:
            return
        reason = SOFT_BOUNCES_REASON
    suppress_from_receipt(conn, params, outbox_id=outbox_id, email=receipt.recipient, reason=reason)


def _mark_processed(conn, receipt: Receipt, outcome: str, outbox_id: str | None, params: dict, *, keep: bool) -> bool:
    """The last statement of the transaction; False when this receipt was processed before."""
    values = {
        **params,
        "type": receipt.type,
        "environment": receipt.environment,
        "payload": receipt.kept_fields if keep else None,
        "unnamed_payload": receipt.kept_fields_unnamed if keep else None,
        "outcome": outcome,
        "outbox_id": outbox_id,
        "source": receipt.source,
        "bounce_class": receipt.bounce_class,
    }
    return _RECORD_RECEIPT(conn, values).rowcount == 1
