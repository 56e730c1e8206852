"""The one Redis lock of the engine: SET NX EX under a random token, released only by its holder.

A lock with an expiry, so a holder that dies frees it when it expires. Release compares the token
and deletes in one step (a Lua script): a holder whose lock expired and was taken by another worker
must not delete the other's lock.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass

_RELEASE_OWN_LOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


@dataclass(frozen=True)
class HeldLock:
    redis: object
    key: str
    token: str

    def release(self) -> bool:
        """Delete the lock if it is still ours; False if it had expired (or another holds it now)."""
        return bool(self.redis.eval(_RELEASE_OWN_LOCK, 1, self.key, self.token))


def try_lock(redis, key: str, seconds: float) -> HeldLock | None:
    """The lock for `seconds` (whole seconds, at least one), or None if another holds it."""
    token = uuid.uuid4().hex
    if not redis.set(key, token, nx=True, ex=max(1, math.ceil(seconds))):
        return None
    return HeldLock(redis, key, token)
