"""Slowing down password guessing per address, without handing anyone a way to lock others out.

A fixed "five failures lock the address" rule lets anyone who knows an address keep its owner out.
So failures per address only slow sign-in down: past FREE_FAILURES in the window, every attempt at
that address waits before its password is checked, doubling per failure up to MAX_DELAY_SECONDS.
Its owner can still sign in, a little slower; a guesser gets a few attempts a second at most, and the
per-client limits (portal/auth/guesses.py) still stop any one client outright.

The counts live in the database (`login_failures`), keyed by a hash of the address: every process
and machine sees the same count, and sign-in does not depend on Redis (a Redis outage must not keep
people out, nor let guessing run unslowed). A failure costs one small write; a success one delete.
The same count guards every other form that checks a password (the account page, erasing one's own
account): see portal/auth/guesses.py.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database
from portal.core.text import normalise_email

FREE_FAILURES = 5
WINDOW_SECONDS = 15 * 60
FIRST_DELAY_SECONDS = 0.25
MAX_DELAY_SECONDS = 2.0

_FAILURES_IN_WINDOW = sa.text(
    "SELECT failures FROM login_failures WHERE address_hash = :key AND window_started_at > :window_start"
)
# A failure after the window has ended starts a new window at 1.
_COUNT_FAILURE = sa.text(
    """
    INSERT INTO login_failures (address_hash, failures, window_started_at) VALUES (:key, 1, :now)
    ON CONFLICT (address_hash) DO UPDATE SET
        failures = CASE WHEN window_started_at > :window_start THEN failures + 1 ELSE 1 END,
        window_started_at = CASE WHEN window_started_at > :window_start THEN window_started_at ELSE :now END
    """
)
# Ended windows are dropped as new failures arrive, so the table stays the size of one window.
_DROP_ENDED_WINDOWS = sa.text("DELETE FROM login_failures WHERE window_started_at <= :window_start")
_FORGET = sa.text("DELETE FROM login_failures WHERE address_hash = :key")


def login_failure_key(email: str) -> str:
    """The hash an address's failures are counted under (no address is stored)."""
    return hashlib.sha256(normalise_email(email).encode()).hexdigest()[:32]


def _window(email: str, now: datetime) -> dict:
    return {
        "key": login_failure_key(email),
        "now": clock.iso(now),
        "window_start": clock.iso(now - timedelta(seconds=WINDOW_SECONDS)),
    }


def delay_after(failures: int) -> float:
    """Seconds an attempt waits when the address has `failures` recent failed attempts."""
    beyond = failures - FREE_FAILURES
    return 0.0 if beyond < 0 else min(FIRST_DELAY_SECONDS * 2**beyond, MAX_DELAY_SECONDS)


def guess_delay(db: Database, email: str, *, now: datetime) -> float:
    """How long a password check for `email` waits now."""
    return delay_after(recent_failures(db, email, now=now))


def recent_failures(db: Database, email: str, *, now: datetime) -> int:
    with db.read() as conn:
        return conn.execute(_FAILURES_IN_WINDOW, _window(email, now)).scalar() or 0


def record_failure(db: Database, email: str, *, now: datetime) -> None:
    params = _window(email, now)
    with db.write() as conn:
        conn.execute(_DROP_ENDED_WINDOWS, params)
        conn.execute(_COUNT_FAILURE, params)


def forget_failures(db: Database, email: str) -> None:
    """After a successful sign-in: the owner is in, so earlier failures no longer slow them down."""
    with db.write() as conn:
        conn.execute(_FORGET, {"key": login_failure_key(email)})
