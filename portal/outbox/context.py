"""What the engine needs from its host, passed in explicitly: settings, database, Redis, provider."""
from __future__ import annotations

import random
from dataclasses import dataclass

from redis import Redis

from portal.db import Database
from portal.outbox.provider import ResendProvider
from portal.settings import Settings


@dataclass
class OutboxContext:
    settings: Settings
    db: Database
    redis: Redis
    provider: ResendProvider

    @classmethod
    def from_settings(cls, settings: Settings) -> "OutboxContext":
        return cls(
            settings=settings,
            db=Database(settings.database_url),
            redis=Redis.from_url(settings.redis_url, socket_timeout=5, socket_connect_timeout=5),
            provider=ResendProvider(settings),
        )


def retry_delay(attempt: int, settings: Settings, retry_after: float | None = None, rng=random) -> float:
    """base × 2^(attempt−1), capped, with up to 20% jitter off; never sooner than retry-after."""
    attempt = max(1, attempt)
    capped = min(settings.outbox_retry_cap_seconds, settings.outbox_retry_base_seconds * 2 ** (attempt - 1))
    delay = capped * rng.uniform(0.8, 1.0)
    return max(delay, retry_after or 0.0)
