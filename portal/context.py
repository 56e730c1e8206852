"""The handles every part of the portal works with: settings, database, Redis and the email provider.

Built once per process from the settings: by the app factory for the web app, by worker.py for the
worker. Flask-free, so the email engine can take it as an argument.
"""
from __future__ import annotations

from dataclasses import dataclass

from redis import Redis

from portal.db import Database
from portal.outbox.provider import ResendProvider
from portal.settings import Settings


@dataclass
class PortalContext:
    settings: Settings
    db: Database
    redis: Redis
    provider: ResendProvider

    @classmethod
    def from_settings(cls, settings: Settings, redis_timeout: float = 5) -> "PortalContext":
        return cls(
            settings=settings,
            db=Database(settings.database_url),
            redis=Redis.from_url(settings.redis_url, socket_timeout=redis_timeout,
                                 socket_connect_timeout=redis_timeout),
            provider=ResendProvider(settings),
        )
