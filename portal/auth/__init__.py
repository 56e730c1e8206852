"""Accounts and sign-in: companies, users, password hashing.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.auth.operations import (
    MIN_PASSWORD_LENGTH,
    AccountError,
    end_all_sessions,
    ensure_company,
    hash_password,
    insert_user,
)
from portal.auth.queries import load_user, verify_password

__all__ = [
    "MIN_PASSWORD_LENGTH",
    "AccountError",
    "end_all_sessions",
    "ensure_company",
    "hash_password",
    "insert_user",
    "load_user",
    "verify_password",
]
