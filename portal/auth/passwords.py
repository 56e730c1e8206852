"""The one password hasher (argon2): hashing a new password, and checking one in the same time
whether or not the account exists."""

from __future__ import annotations

from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()


def hash_secret(password: str) -> str:
    return _hasher.hash(password)


@cache
def _dummy_hash() -> str:
    # Made at the first check, not at import: every web and worker process imports this module,
    # and an argon2 hash is a tenth of a second of CPU a process would pay at start for nothing.
    return _hasher.hash("no-such-user-placeholder")


def matches(stored_hash: str | None, password: str) -> bool:
    """Whether the password fits the stored hash. With no hash (an unknown account) a dummy one is
    checked instead, so both answers take the same time; the answer is then always False."""
    try:
        return (
            _hasher.verify(_dummy_hash() if stored_hash is None else stored_hash, password) and stored_hash is not None
        )
    except (VerificationError, InvalidHashError):
        return False
