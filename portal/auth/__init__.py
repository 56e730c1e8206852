"""Accounts and sign-in: companies, users, password hashing.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.auth.guesses import guess_refused, password_guesses
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
