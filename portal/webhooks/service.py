"""Applying a provider receipt to the outbox, once, in one transaction.

`handle_receipt` is the whole webhook: verify, read, apply. `apply_receipt` stores the receipt
(ON CONFLICT(provider_event_id) DO NOTHING) and, in the same `db.write()`, moves the outbox row,
suppresses a bounced or complained address and marks the receipt processed. Every statement after
the insert carries the guard "this receipt is still unprocessed", so a redelivered receipt whose
first delivery committed changes nothing, and one whose first delivery rolled back applies once.

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

from typing import Mapping

import sqlalchemy as sa

from portal.db import Database, Statement
from portal.outbox import clock
from portal.outbox.statuses import (
    ALL, BOUNCED, COMPLAINED, DEAD_LETTER, DELIVERED, SENT, UNKNOWN_OUTCOME, UNSETTLED, sql_list,
)
from portal.settings import Settings
from portal.webhooks.receipts import Receipt, parse_receipt, verify_signature

# Event type -> the outbox status it reports (None: recorded, but says nothing about status).
EVENT_STATUS = {
    "email.sent": SENT,
    "email.delivered": DELIVERED,
    "email.delivery_delayed": None,
    "email.bounced": BOUNCED,
    "email.complained": COMPLAINED,
}
STATUS_RANK = {SENT: 1, DELIVERED: 2, BOUNCED: 3, COMPLAINED: 3}
# Rows a receipt may move once they carry the provider's message ID.
RECEIPT_STATUSES = tuple(STATUS_RANK)
SUPPRESSING_EVENTS = {"email.bounced": "bounced (permanent)", "email.complained": "complained"}
SUPPRESSION_SOURCE = "webhook"

# What happened to a receipt: the `outcome` column, and the webhook's answer.
APPLIED = "applied"                      # the outbox row moved (or was settled through its outbox_id tag)
STALE = "stale"                          # our row, but older or lower-ranked than its state: nothing moved
NOT_ELIGIBLE = "not_eligible"            # our row, in a state no receipt may change (e.g. failed)
NO_STATUS_CHANGE = "no_status_change"    # our row; the event carries no status (email.delivery_delayed)
UNMATCHED = "unmatched"                  # our environment, but no outbox row of ours: stored, ignored
OTHER_ENVIRONMENT = "other_environment"  # another environment's mail: counted, not applied, no payload kept
IGNORED_TYPE = "ignored_type"            # an event type we do not act on (opened, clicked, contact.*)
UNDATED = "undated"                      # no usable created_at: it cannot be ordered, so it is not applied
DUPLICATE = "duplicate"                  # answer only: this event was processed before
OUTCOMES = (APPLIED, STALE, NOT_ELIGIBLE, NO_STATUS_CHANGE, UNMATCHED, OTHER_ENVIRONMENT, IGNORED_TYPE, UNDATED)

assert set(RECEIPT_STATUSES) <= set(ALL)
_RANK_OF_ROW = "CASE status " + " ".join(f"WHEN '{s}' THEN {r}" for s, r in STATUS_RANK.items()) + " ELSE 0 END"
# Appended to every statement after the insert: only an unprocessed receipt may act.
_UNPROCESSED = "EXISTS (SELECT 1 FROM email_receipts WHERE provider_event_id = :event_id AND processed_at IS NULL)"


# Another environment's receipt holds another environment's addresses: its payload is not kept.
STORE_RECEIPT = Statement("""
    INSERT INTO email_receipts (provider_event_id, type, provider_message_id, event_created_at,
                                environment, payload, received_at)
    VALUES (:event_id, :type, :email_id, :event_at, :environment, :payload, :now)
    ON CONFLICT (provider_event_id) DO NOTHING
""")
# Newer (or equally new) and not lower-ranked: one guarded UPDATE decides.
ADVANCE_ROW = Statement(f"""
    UPDATE email_outbox
    SET status = :status, last_event_at = :event_at, updated_at = :now
    WHERE provider_message_id = :email_id
      AND status IN {sql_list(RECEIPT_STATUSES)}
      AND (last_event_at IS NULL OR julianday(:event_at) >= julianday(last_event_at))
      AND :rank >= {_RANK_OF_ROW}
      AND {_UNPROCESSED}
    RETURNING id
""")
FIND_BY_MESSAGE_ID = Statement("SELECT id, status FROM email_outbox WHERE provider_message_id = :email_id")
FIND_BY_ID = Statement("SELECT id FROM email_outbox WHERE id = :outbox_id")
# Eligible: a row still waiting or in flight, or a dead letter whose outcome was unknown (the
# receipt answers exactly that question). Never failed or suppressed, never one holding a message ID.
SETTLE_FROM_TAG = Statement(f"""
    UPDATE email_outbox
    SET provider_message_id = :email_id, status = :status, last_event_at = :event_at,
        sent_at = COALESCE(sent_at, :event_at), claim_expires_at = NULL, next_attempt_at = NULL,
        last_error = NULL, outcome_unknown = 0, updated_at = :now
    WHERE id = :outbox_id AND provider_message_id IS NULL
      AND (status IN {sql_list(UNSETTLED)} OR (status = '{DEAD_LETTER}' AND last_error = '{UNKNOWN_OUTCOME}'))
      AND {_UNPROCESSED}
""")
DELETE_FROZEN_PAYLOAD = Statement(f"DELETE FROM email_frozen_payloads WHERE outbox_id = :outbox_id AND {_UNPROCESSED}")
# WHERE is required before ON CONFLICT after a SELECT (SQLite's parsing rule), and is the guard.
SUPPRESS = Statement(f"""
    INSERT INTO email_suppressions (email, reason, source, created_at)
    SELECT :email, :reason, :source, :now WHERE {_UNPROCESSED}
    ON CONFLICT (email) DO NOTHING
""")
AUDIT_SUPPRESSION = Statement(f"""
    INSERT INTO email_suppression_events (email, action, reason, actor_user_id, source, created_at)
    SELECT :email, 'add', :reason, NULL, :source, :now WHERE {_UNPROCESSED}
""")
MARK_PROCESSED = Statement("""
    UPDATE email_receipts SET processed_at = :now, outcome = :outcome, outbox_id = :outbox_id
    WHERE provider_event_id = :event_id AND processed_at IS NULL
""")


def handle_receipt(db: Database, settings: Settings, body: bytes, headers: Mapping[str, str]) -> str:
    """The webhook: raises SignatureError (401) or MalformedReceipt (400); returns the outcome."""
    event_id = verify_signature(settings.resend_webhook_secret, body, headers)
    receipt = parse_receipt(event_id, body)
    return apply_receipt(db, receipt, environment=settings.portal_env)


def apply_receipt(db: Database, receipt: Receipt, *, environment: str) -> str:
    ours = receipt.environment == environment
    params = {"event_id": receipt.event_id, "now": clock.now_iso(), "email_id": receipt.email_id,
              "event_at": receipt.event_at}
    with db.write() as conn:
        STORE_RECEIPT(conn, {**params, "type": receipt.type, "environment": receipt.environment,
                                     "payload": receipt.body if ours else None})
        outbox_id = None
        if receipt.type not in EVENT_STATUS:
            outcome = IGNORED_TYPE
        elif not ours:
            outcome = OTHER_ENVIRONMENT
        elif receipt.event_at is None:
            outcome = UNDATED
        else:
            outcome, outbox_id = _apply_to_outbox(conn, receipt, params)
            if outbox_id is not None:
                _suppress_recipient(conn, receipt, params)
        if not _mark_processed(conn, outcome, outbox_id, params):
            return DUPLICATE
    return outcome


def _apply_to_outbox(conn, receipt: Receipt, params: dict) -> tuple[str, str | None]:
    """Move the matched row; return the outcome and the row's ID (None: not one of ours)."""
    status = EVENT_STATUS[receipt.type]
    if receipt.email_id is None:
        return UNMATCHED, None
    if status is not None:
        # The common case first, in one statement: our row, and the receipt moves it.
        moved = ADVANCE_ROW(conn, {**params, "status": status, "rank": STATUS_RANK[status]}).scalar()
        if moved is not None:
            return APPLIED, moved
    matched = FIND_BY_MESSAGE_ID(conn, params).first()
    if matched is not None:
        if matched.status not in RECEIPT_STATUSES:
            return NOT_ELIGIBLE, matched.id
        return (STALE if status is not None else NO_STATUS_CHANGE), matched.id
    if receipt.outbox_id is not None:
        tagged = FIND_BY_ID(conn, {"outbox_id": receipt.outbox_id}).scalar()
        if tagged is not None:
            # The provider accepted this row's email, though we never recorded its answer.
            settled = _settle_from_tag(conn, tagged, status or SENT, params)
            return (APPLIED if settled else NOT_ELIGIBLE), tagged
    return UNMATCHED, None


def _settle_from_tag(conn, outbox_id: str, status: str, params: dict) -> bool:
    """Record the provider's message ID on a row that never got its answer.

    The frozen payload goes with the settlement, as it does when the send path records
    acceptance; the row can no longer be claimed, so nothing will replay it.
    """
    values = {**params, "outbox_id": outbox_id, "status": status}
    settled = SETTLE_FROM_TAG(conn, values).rowcount == 1
    if settled:
        DELETE_FROZEN_PAYLOAD(conn, values)
    return settled


def _suppress_recipient(conn, receipt: Receipt, params: dict) -> None:
    """A permanent (or untyped) bounce, or a complaint, puts the address on the suppression list.

    It applies whether or not the row's status moved: an old bounce is still a fact about the address.
    """
    reason = SUPPRESSING_EVENTS.get(receipt.type)
    if reason is None or receipt.recipient is None:
        return
    if receipt.type == "email.bounced" and (receipt.bounce_type or "permanent").lower() != "permanent":
        return
    values = {**params, "email": receipt.recipient, "reason": reason, "source": SUPPRESSION_SOURCE}
    if SUPPRESS(conn, values).rowcount:
        AUDIT_SUPPRESSION(conn, values)


def _mark_processed(conn, outcome: str, outbox_id: str | None, params: dict) -> bool:
    """The last statement of the transaction; False when this receipt was processed before."""
    return MARK_PROCESSED(conn, {**params, "outcome": outcome, "outbox_id": outbox_id}).rowcount == 1


def receipt_counts(db: Database) -> dict[str, int]:
    """Receipts by outcome, for status reports (other_environment is the skipped-and-counted one)."""
    with db.read() as conn:
        rows = conn.execute(
            sa.text("SELECT COALESCE(outcome, 'unprocessed'), COUNT(*) FROM email_receipts GROUP BY 1 ORDER BY 1")
        ).all()
    return {outcome: count for outcome, count in rows}
