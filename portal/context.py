"""The handles every part of the portal works with: settings, database, Redis, the email provider
and the registered email families.

Built once per process from the settings: by the app factory for the web app (reached per request
through `portal.extensions.portal_context()`), by worker.py for the worker. Flask-free, so the
email engine can take it as an argument; the engine itself only names the shape it needs
(portal/outbox/handles.py) and never imports this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from redis import Redis

from portal.db import Database
from portal.email_families import FAMILIES
from portal.outbox.families import FamilyRegistry
from portal.outbox.provider import ResendProvider
from portal.settings import Settings


@dataclass
class PortalContext:
    settings: Settings
    db: Database
    redis: Redis
    provider: ResendProvider
    families: FamilyRegistry

    @classmethod
    def from_settings(cls, settings: Settings, redis_timeout: float = 5) -> PortalContext:
        return cls(
            settings=settings,
            db=Database(settings.database_url),
            redis=Redis.from_url(
                settings.redis_url, socket_timeout=redis_timeout, socket_connect_timeout=redis_timeout
            ),
            provider=ResendProvider(settings),
            families=FAMILIES,
        )
