"""Request-time access to the app's PortalContext (settings, database, Redis), built in the factory."""
from __future__ import annotations

from flask import current_app
from redis import Redis

from portal.context import PortalContext
from portal.db import Database
from portal.settings import Settings


def get_services() -> PortalContext:
    return current_app.extensions["portal"]


def get_db() -> Database:
    return get_services().db


def get_settings() -> Settings:
    return get_services().settings


def get_redis() -> Redis:
    return get_services().redis
