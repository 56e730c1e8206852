"""The handles of one process, which the engine is given and never builds from anything above it.

The web app and the worker each build one (`portal.context.build_context`), with the email
families the areas registered; the engine takes it as an argument everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from redis import Redis

from portal.core.db import Database
from portal.core.settings import Settings
from portal.outbox.ground.families import FamilyRegistry
from portal.outbox.ground.provider import ResendProvider


@dataclass
class PortalContext:
    settings: Settings
    db: Database
    redis: Redis
    provider: ResendProvider
    families: FamilyRegistry

    @classmethod
    def from_settings(cls, settings: Settings, families: FamilyRegistry, redis_timeout: float = 5) -> PortalContext:
        return cls(
            settings=settings,
            db=Database(settings.database_url),
            redis=Redis.from_url(
                settings.redis_url, socket_timeout=redis_timeout, socket_connect_timeout=redis_timeout
            ),
            provider=ResendProvider(settings),
            families=families,
        )
