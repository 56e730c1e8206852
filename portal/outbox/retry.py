"""The one retry schedule for email deliveries."""

from __future__ import annotations

import random

from portal.settings import Settings


def retry_delay(attempt: int, settings: Settings, retry_after: float | None = None, rng=random) -> float:
    """base × 2^(attempt−1), capped, with up to 20% jitter off; never sooner than retry-after."""
    attempt = max(1, attempt)
    capped = min(settings.outbox_retry_cap_seconds, settings.outbox_retry_base_seconds * 2 ** (attempt - 1))
    delay = capped * rng.uniform(0.8, 1.0)
    return max(delay, retry_after or 0.0)
