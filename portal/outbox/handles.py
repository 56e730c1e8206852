"""What the engine needs from its caller: the handles of one process, passed in, never imported.

The web app and the worker each build a `portal.context.PortalContext`, which has these
attributes; the engine only names the shape, so it depends on no module above it.
"""

from __future__ import annotations

from typing import Protocol

from redis import Redis

from portal.db import Database
from portal.outbox.families import FamilyRegistry
from portal.outbox.provider import ResendProvider
from portal.settings import Settings


class EmailHandles(Protocol):
    settings: Settings
    db: Database
    redis: Redis
    provider: ResendProvider
    families: FamilyRegistry
