"""Accounts and sign-in: companies, users, password hashing.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from datetime import datetime

from portal.auth.operations import (
    MIN_PASSWORD_LENGTH,
    AccountError,
    end_all_sessions,
    ensure_company,
    hash_password,
    insert_user,
)
from portal.auth.queries import load_user, reading_language, verify_password
from portal.auth.throttle import guess_delay, login_failure_key, record_failure
from portal.core.db import Database


def password_guesses(view):
    """Decorator for a view that checks a password: the per-client limits every such view shares
    (portal/auth/guesses.py). Flask-Limiter loads with the first view it guards, not with this face:
    a worker imports the face (an erasure uses login_failure_key) and must load no web framework."""
    from portal.auth.guesses import password_guesses as limited

    return limited(view)


def guess_refused(db: Database, email: str, *, now: datetime) -> None:
    """A password check for `email` failed: it counts against the address and this client's limits."""
    from portal.auth.guesses import guess_refused as refused

    refused(db, email, now=now)


__all__ = [
    "MIN_PASSWORD_LENGTH",
    "AccountError",
    "end_all_sessions",
    "ensure_company",
    "guess_delay",
    "guess_refused",
    "hash_password",
    "insert_user",
    "load_user",
    "reading_language",
    "login_failure_key",
    "password_guesses",
    "record_failure",
    "verify_password",
]
