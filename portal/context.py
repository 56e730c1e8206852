"""One process's handles with every email family the portal sends: what the app factory and
worker.py build at start-up (the web app reaches its own through `portal.web.extensions.portal_context()`)."""

from __future__ import annotations

from portal.core.settings import Settings
from portal.email_families import FAMILIES
from portal.outbox import PortalContext


def build_context(settings: Settings, redis_timeout: float = 5) -> PortalContext:
    return PortalContext.from_settings(settings, FAMILIES, redis_timeout=redis_timeout)
