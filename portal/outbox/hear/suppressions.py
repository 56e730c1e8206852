"""The suppression list: addresses the portal must not email, and who put them there.

Each change and its audit row commit in one transaction. An admin changes the list by hand, with
a reason that is kept; a bounce or complaint receipt adds to it in the receipt's own transaction
(`suppress_from_receipt`, source 'webhook'). The send path reads the list in the claim itself
(claims.py: the claim reads it in its own transaction), so a suppressed address is never sent to.
Resend's own list is followed as its events arrive (`follow_provider_list`) and compared with this
one daily (suppression_comparison.py), whose offers change either list through `add_by_admin`,
`remove_by_admin` and `audit_by_admin` here.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database
from portal.core.driver import Statement
from portal.core.text import normalise_email
from portal.outbox.ground.erased import ERASED_ROW, address_hash
from portal.outbox.ground.rows import RECEIPT_UNPROCESSED

LIST_LIMIT = 200
SOURCE_ADMIN = "admin"
SOURCE_WEBHOOK = "webhook"
ADD, REMOVE = "add", "remove"


class SuppressionError(ValueError):
    """A change that cannot be made; the message is safe to show."""


def list_suppressions(
    db: Database, search: str | None = None, limit: int = LIST_LIMIT, offset: int = 0
) -> tuple[list[dict], int]:
    """Suppressed addresses, newest first, whose address contains `search` (from `offset` on); and how many match."""
    needle = normalise_email(search or "")
    # instr() rather than LIKE: a search for "a_b" or "50%" means those characters.
    where = "WHERE instr(email, :needle) > 0" if needle else ""
    with db.read() as conn:
        total = conn.execute(sa.text(f"SELECT COUNT(*) FROM email_suppressions {where}"), {"needle": needle}).scalar()
        rows = (
            conn.execute(
                sa.text(
                    f"""
                SELECT email, reason, source, created_at FROM email_suppressions {where}
                ORDER BY created_at DESC, email LIMIT :limit OFFSET :offset
                """
                ),
                {"needle": needle, "limit": limit, "offset": offset},
            )
            .mappings()
            .all()
        )
    return [dict(row) for row in rows], total


def is_suppressed(db: Database, email: str) -> bool:
    with db.read() as conn:
        return (
            conn.execute(
                sa.text("SELECT 1 FROM email_suppressions WHERE email = :email"), {"email": normalise_email(email)}
            ).first()
            is not None
        )


def history(db: Database, email: str | None = None, limit: int = 20) -> list[dict]:
    """Audit rows, newest first, with the acting admin's address (or none, for the webhook)."""
    where = "WHERE e.email = :email" if email else ""
    with db.read() as conn:
        rows = (
            conn.execute(
                sa.text(
                    f"""
                SELECT e.email, e.action, e.reason, e.source, e.side, e.created_at, u.email AS actor_email
                FROM email_suppression_events e LEFT JOIN users u ON u.id = e.actor_user_id
                {where} ORDER BY e.created_at DESC, e.id DESC LIMIT :limit
                """
                ),
                {"email": normalise_email(email or ""), "limit": limit},
            )
            .mappings()
            .all()
        )
    return [dict(row) for row in rows]


def add_suppression(db: Database, *, email: str, reason: str, actor_user_id: int, now: datetime) -> None:
    email, reason = normalise_email(email), reason.strip()
    _check(email, reason)
    with db.write() as conn:
        if not add_by_admin(conn, email=email, reason=reason, actor_user_id=actor_user_id, now=clock.iso(now)):
            raise SuppressionError("That address is already on the suppression list.")


def remove_suppression(db: Database, *, email: str, reason: str, actor_user_id: int, now: datetime) -> None:
    email, reason = normalise_email(email), reason.strip()
    _check(email, reason)
    with db.write() as conn:
        if not remove_by_admin(conn, email=email, reason=reason, actor_user_id=actor_user_id, now=clock.iso(now)):
            raise SuppressionError("That address is not on the suppression list.")


def _check(email: str, reason: str) -> None:
    # The form validates first; this keeps the domain rule true for any caller.
    if "@" not in email or len(email) > 254:
        raise SuppressionError("Enter a valid email address.")
    if not reason:
        raise SuppressionError("Give a reason; it is kept with the change.")


# An admin's changes, each with its audit row, on the caller's transaction (the list's page here,
# the comparison's offers in suppression_comparison.py). `email` is an address or an erased
# person's keyed hash, as the list keeps it.
SIDE_PORTAL, SIDE_PROVIDER = "portal", "provider"
_ADD_BY_ADMIN = Statement(
    f"""
    INSERT INTO email_suppressions (email, reason, source, created_at) VALUES (:email, :reason, '{SOURCE_ADMIN}', :now)
    ON CONFLICT (email) DO NOTHING
    """
)
_REMOVE_BY_ADMIN = Statement("DELETE FROM email_suppressions WHERE email = :email")
_AUDIT_BY_ADMIN = Statement(
    f"""
    INSERT INTO email_suppression_events (email, action, reason, actor_user_id, source, side, created_at)
    VALUES (:email, :action, :reason, :actor, '{SOURCE_ADMIN}', :side, :now)
    """
)


def add_by_admin(conn, *, email: str, reason: str, actor_user_id: int, now: str) -> bool:
    """Add `email` to the portal's list, audited; False (nothing written) when it is listed already."""
    if not _ADD_BY_ADMIN(conn, {"email": email, "reason": reason, "now": now}).rowcount:
        return False
    audit_by_admin(conn, email=email, action=ADD, reason=reason, actor_user_id=actor_user_id, now=now)
    return True


def remove_by_admin(conn, *, email: str, reason: str, actor_user_id: int, now: str) -> bool:
    """Remove `email` from the portal's list, audited; False (nothing written) when it is not listed."""
    if not _REMOVE_BY_ADMIN(conn, {"email": email}).rowcount:
        return False
    audit_by_admin(conn, email=email, action=REMOVE, reason=reason, actor_user_id=actor_user_id, now=now)
    return True


def audit_by_admin(
    conn, *, email: str, action: str, reason: str, actor_user_id: int, now: str, side: str = SIDE_PORTAL
) -> None:
    """The audit row of an admin's change of one list: the portal's, or Resend's (`side`)."""
    values = {"email": email, "action": action, "reason": reason, "actor": actor_user_id, "side": side, "now": now}
    _AUDIT_BY_ADMIN(conn, values)


# The webhook's changes to the list (a receipt's bounce or complaint, Resend's own list): once per
# receipt. WHERE is required before ON CONFLICT after a SELECT (SQLite's parsing rule), and is the guard.
_ADD_FROM_WEBHOOK = Statement(
    f"""
    INSERT INTO email_suppressions (email, reason, source, created_at)
    SELECT :email, :reason, '{SOURCE_WEBHOOK}', :now WHERE {RECEIPT_UNPROCESSED}
    ON CONFLICT (email) DO NOTHING
    """
)
# Written only after a change of the list, which the receipt's guard allowed.
_AUDIT_FROM_WEBHOOK = Statement(
    f"""
    INSERT INTO email_suppression_events (email, action, reason, actor_user_id, source, created_at)
    VALUES (:email, :action, :reason, NULL, '{SOURCE_WEBHOOK}', :now)
    """
)


# None: the row holds its address; '' : erased, with no hash recorded; else the erased address's hash.
_ERASED_AS = Statement(
    f"""
    SELECT CASE WHEN {ERASED_ROW}
                THEN COALESCE((SELECT address_hash FROM erased_addresses WHERE pseudonym = recipient), '') END
    FROM email_outbox WHERE id = :outbox_id
    """
)


def suppress_from_receipt(conn, params: dict, *, outbox_id: str, email: str, reason: str) -> None:
    """Inside a receipt's transaction: add the address (once) and its audit row.

    When the email's row was erased (its recipient is a pseudonym), the entry is the keyed hash the
    erasure recorded for it, as the erasure left the address's earlier entries: never the address.
    A row erased with no hash recorded (by retention, or before erasures recorded one) has no entry
    to add."""
    erased_as = _ERASED_AS(conn, {"outbox_id": outbox_id}).scalar()
    if erased_as == "":
        return
    values = {**params, "email": erased_as or email, "reason": reason, "action": ADD}
    if _ADD_FROM_WEBHOOK(conn, values).rowcount:
        _AUDIT_FROM_WEBHOOK(conn, values)


# Resend's own list, as its suppression.added / suppression.removed webhook events report it: the
# portal's list follows, in the receipt's transaction, audited as the webhook's (source 'webhook').
# An erased address is on the portal's list as its keyed hash: it is added so, and found so.
PROVIDER_EVENTS = {"suppression.added": ADD, "suppression.removed": REMOVE}
ADDED_AT_PROVIDER = "added at Resend"
REMOVED_AT_PROVIDER = "removed at Resend"
_KNOWN_ERASED = Statement("SELECT 1 FROM erased_addresses WHERE address_hash = :hashed")
_REMOVE_FROM_PROVIDER = Statement(
    f"DELETE FROM email_suppressions WHERE email IN (:email, :hashed) AND {RECEIPT_UNPROCESSED} RETURNING email"
)


def follow_provider_list(conn, params: dict, *, event_type: str, email: str, secret_key: str) -> bool:
    """Inside a receipt's transaction: apply Resend's suppression.added or .removed for `email`;
    True when the portal's list changed."""
    action, hashed = PROVIDER_EVENTS[event_type], address_hash(email, secret_key)
    if action == ADD:
        erased = _KNOWN_ERASED(conn, {"hashed": hashed}).first() is not None
        values = {**params, "email": hashed if erased else email, "reason": ADDED_AT_PROVIDER, "action": ADD}
        if not _ADD_FROM_WEBHOOK(conn, values).rowcount:
            return False
        _AUDIT_FROM_WEBHOOK(conn, values)
        return True
    removed = [row[0] for row in _REMOVE_FROM_PROVIDER(conn, {**params, "email": email, "hashed": hashed}).all()]
    for key in removed:
        _AUDIT_FROM_WEBHOOK(conn, {**params, "email": key, "reason": REMOVED_AT_PROVIDER, "action": REMOVE})
    return bool(removed)
