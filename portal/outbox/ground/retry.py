"""Retry schedules for email deliveries: the settings' default, or the one a family declares."""

from __future__ import annotations

import random
from dataclasses import dataclass

from portal.core.settings import Settings


def retry_delay(attempt: int, settings: Settings, retry_after: float | None = None, rng=random) -> float:
    """base × 2^(attempt−1), capped, with up to 20% jitter off; never sooner than retry-after."""
    return _delay(attempt, settings.outbox_retry_base_seconds, settings.outbox_retry_cap_seconds, retry_after, rng)


@dataclass(frozen=True)
class RetryPolicy:
    """A family's own schedule (exponential, capped), declared with the family.

    A family without one keeps the settings' schedule (OUTBOX_RETRY_*, OUTBOX_MAX_ATTEMPTS).
    """

    base_seconds: float
    cap_seconds: float
    max_attempts: int

    def __post_init__(self):
        if not (0 < self.base_seconds <= self.cap_seconds) or self.max_attempts < 1:
            raise ValueError("a retry policy needs 0 < base <= cap and at least one attempt")

    def delay(self, attempt: int, retry_after: float | None = None, rng=random) -> float:
        return _delay(attempt, self.base_seconds, self.cap_seconds, retry_after, rng)


def family_retry_delay(family, attempt: int, settings: Settings, retry_after: float | None = None) -> float:
    """The delay before the next attempt of one of `family`'s emails."""
    policy = getattr(family, "retry", None)
    if policy is None:
        return retry_delay(attempt, settings, retry_after)
    return policy.delay(attempt, retry_after)


def family_max_attempts(family, settings: Settings) -> int:
    policy = getattr(family, "retry", None)
    return settings.outbox_max_attempts if policy is None else policy.max_attempts


def _delay(attempt: int, base: float, cap: float, retry_after: float | None, rng) -> float:
    attempt = max(1, attempt)
    capped = min(cap, base * 2 ** (attempt - 1))
    delay = capped * rng.uniform(0.8, 1.0)
    return max(delay, retry_after or 0.0)
