"""Slowing down password guessing per address, without handing anyone a way to lock others out.

A fixed "five failures lock the address" rule lets anyone who knows an address keep its owner out.
So failures per address only slow sign-in down: past FREE_FAILURES in the window, every attempt at
that address waits before its password is checked, doubling per failure up to MAX_DELAY_SECONDS.
Its owner can still sign in, a little slower; a guesser gets a few attempts a second at most, and the
per-client limit (auth/routes.py) still stops any one client outright.

The counts live in Redis, keyed by a hash of the address (no contact details in Redis). When Redis
cannot count, sign-in fails closed: better "try again shortly" than unlimited guessing.
"""

from __future__ import annotations

import hashlib

import redis

from portal.core.text import normalise_email

FREE_FAILURES = 5
WINDOW_SECONDS = 15 * 60
FIRST_DELAY_SECONDS = 0.25
MAX_DELAY_SECONDS = 2.0
_PREFIX = "portal-limits:login-failures:"


class CannotCount(Exception):
    """Redis did not answer, so failures cannot be counted; the caller refuses the attempt."""


def _key(email: str) -> str:
    return _PREFIX + hashlib.sha256(normalise_email(email).encode()).hexdigest()[:32]


def delay_after(failures: int) -> float:
    """Seconds an attempt waits when the address has `failures` recent failed attempts."""
    beyond = failures - FREE_FAILURES
    return 0.0 if beyond < 0 else min(FIRST_DELAY_SECONDS * 2**beyond, MAX_DELAY_SECONDS)


def current_delay(client: redis.Redis, email: str) -> float:
    try:
        failures = int(client.get(_key(email)) or 0)
    except redis.RedisError as error:
        raise CannotCount from error
    return delay_after(failures)


def record_failure(client: redis.Redis, email: str) -> None:
    key = _key(email)
    try:
        with client.pipeline() as pipe:
            pipe.incr(key).expire(key, WINDOW_SECONDS).execute()
    except redis.RedisError as error:
        raise CannotCount from error


def forget_failures(client: redis.Redis, email: str) -> None:
    """After a successful sign-in: the owner is in, so earlier failures no longer slow them down."""
    try:
        client.delete(_key(email))
    except redis.RedisError:
        pass  # the count expires on its own
