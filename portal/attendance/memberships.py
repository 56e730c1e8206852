"""Which company a user belonged to, and when: the history hours are attributed by.

Helpers here take the caller's connection, so an account's creation, its first membership and
the attachment of its waiting sessions are one transaction.

A session's company is the membership in force when it was held (started_at <= held_at, and not
yet ended). A session held before the user's first membership (a volunteer who attended before
creating the account) belongs to that first company.
"""

from __future__ import annotations

import sqlalchemy as sa


def company_at(user: str, held: str) -> str:
    """SQL for the company of user `user` at time `held` (both SQL expressions); NULL for none."""
    return f"""COALESCE(
        (SELECT m.company_id FROM company_memberships m
         WHERE m.user_id = {user} AND m.started_at <= {held} AND (m.ended_at IS NULL OR m.ended_at > {held})
         ORDER BY m.started_at DESC LIMIT 1),
        (SELECT m.company_id FROM company_memberships m
         WHERE m.user_id = {user}
           AND NOT EXISTS (SELECT 1 FROM company_memberships p WHERE p.user_id = {user} AND p.started_at <= {held})
         ORDER BY m.started_at LIMIT 1))"""


_START = sa.text(
    "INSERT INTO company_memberships (user_id, company_id, started_at) VALUES (:user_id, :company_id, :at)"
)
_END_CURRENT = sa.text(
    "UPDATE company_memberships SET ended_at = :at WHERE user_id = :user_id AND ended_at IS NULL RETURNING company_id"
)
_ATTACH_UNMATCHED = sa.text(f"""
    UPDATE attendance_sessions SET user_id = :user_id, company_id = {company_at(":user_id", "held_at")}
    WHERE user_id IS NULL AND volunteer_email = :email
""")
_REATTRIBUTE = sa.text(f"""
    UPDATE attendance_sessions SET company_id = {company_at(":user_id", "held_at")}
    WHERE user_id = :user_id
""")


def start_membership(conn: sa.Connection, *, user_id: int, company_id: int, at: str) -> None:
    conn.execute(_START, {"user_id": user_id, "company_id": company_id, "at": at})


def end_membership(conn: sa.Connection, *, user_id: int, at: str) -> int | None:
    """End the user's current membership at `at`; return its company (None: there was none)."""
    return conn.execute(_END_CURRENT, {"user_id": user_id, "at": at}).scalar()


def attach_unmatched_sessions(conn: sa.Connection, *, user_id: int, email: str) -> int:
    """Sessions waiting for this address (stored lower-cased) now count; return how many."""
    return conn.execute(_ATTACH_UNMATCHED, {"user_id": user_id, "email": email.strip().lower()}).rowcount


def reattribute_sessions(conn: sa.Connection, *, user_id: int) -> None:
    """Recompute the company of each of the user's sessions after their history changed."""
    conn.execute(_REATTRIBUTE, {"user_id": user_id})


def account_created(conn: sa.Connection, *, user_id: int, email: str, company_id: int | None, at: str) -> int:
    """A new account: its first membership, and the sessions that waited for its address."""
    if company_id is not None:
        start_membership(conn, user_id=user_id, company_id=company_id, at=at)
    return attach_unmatched_sessions(conn, user_id=user_id, email=email)
