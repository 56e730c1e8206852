"""The app's shared handles (settings, database, Redis), built once per app in the factory."""
from __future__ import annotations

from dataclasses import dataclass

from flask import current_app
from redis import Redis

from portal.db import Database
from portal.settings import Settings


@dataclass
class Services:
    settings: Settings
    db: Database
    redis: Redis

    @classmethod
    def from_settings(cls, settings: Settings) -> "Services":
        return cls(
            settings=settings,
            db=Database(settings.database_url),
            # Short timeouts: a Redis outage must not hang a web request.
            redis=Redis.from_url(settings.redis_url, socket_timeout=2, socket_connect_timeout=2),
        )


def get_services() -> Services:
    return current_app.extensions["portal"]


def get_db() -> Database:
    return get_services().db


def get_settings() -> Settings:
    return get_services().settings


def get_redis() -> Redis:
    return get_services().redis
