"""One provider rate limit shared by every worker, kept in Redis.

The provider allows RESEND_RATE_LIMIT_PER_SECOND requests per second for the whole account, and
answers 429 past it. Every worker takes a slot before each provider request, from a moving window
in Redis (the `limits` library's: one atomic Lua script per try, so no two workers take the same
slot, and no second ever holds more than the limit's requests). A worker that finds the window
full sleeps until its oldest slot leaves it instead of sending into a 429.

The provider's own headers have the last word: when an answer is a 429, or says nothing is left
(`ratelimit-remaining: 0`) while our window still has room, every worker pauses until
`retry-after` / `ratelimit-reset`, through one shared key.

Why `limits` is enough: its Redis moving window is one Lua script that checks and records a slot
atomically, so the guarantee (no one-second window with more than the limit's slots, across all
workers) holds without a lock of ours. It does not wait; the loop below does.

A wait is bounded: it gives up (the caller releases its claim and retries later, nothing sent)
when it would run past the caller's deadline, so waiting never holds a claim past its expiry, or
when the worker is asked to stop.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping

from limits import RateLimitItemPerSecond
from limits.storage import RedisStorage
from limits.strategies import MovingWindowRateLimiter
from redis import Redis

from portal.outbox import metrics

log = logging.getLogger(__name__)
LIMIT_NAMESPACE = "portal:provider"
PAUSE_KEY = "portal:provider:pause"
LONGEST_NAP_SECONDS = 0.1
NO_PAUSE_TRUSTED_SECONDS = 0.1
HEADROOM_DIVISOR = 25  # one slot of headroom per this many requests a second
# Below HEADROOM_DIVISOR requests per second there is no slot of headroom: a worker that waited for
# the window's oldest slot to leave waits this much longer, so the request it sends cannot reach the
# provider's window together with the one that slot carried. A request reaches the provider some
# time after its slot, and that time varies (a batch's body is built and sent after its seal's
# write). bench/campaign.py, 10,000 recipients at 5/s, 100 batch requests: without a margin 9 met a
# 429 (each pauses every worker a second), with 50 ms 2, with 100 ms none; 100 ms costs 1/11 of the
# rate while the window is full.
SLOT_MARGIN_SECONDS = 0.1
# Set by the worker on SIGTERM: a delivery waiting for a slot gives up instead of holding shutdown.
stopping = threading.Event()


class ProviderRateLimit:
    def __init__(self, redis: Redis, redis_url: str, per_second: int):
        self.redis = redis
        # A request reaches the provider a little after its slot was taken, later on a busy
        # machine, so the provider's window can see one slot's request arrive with the next
        # window's. At high limits a few slots of headroom absorb that (50/s: 48); at Resend's
        # default of 5/s the spread is too small to matter and every slot is used.
        self.item = RateLimitItemPerSecond(per_second - per_second // HEADROOM_DIVISOR, 1)
        self.margin = SLOT_MARGIN_SECONDS if per_second < HEADROOM_DIVISOR else 0.0
        storage = RedisStorage(redis_url, connection_pool=redis.connection_pool, key_prefix="portal-limits")
        self.limiter = MovingWindowRateLimiter(storage)
        self._no_pause_until = 0.0

    @metrics.times_rate_limit_wait
    def acquire(self, deadline: float) -> bool:
        """Take one slot; False if none came before `deadline` (time.monotonic()) or we must stop."""
        while not stopping.is_set():
            wait = self.pause_left()
            if wait <= 0:
                if self.limiter.hit(self.item, LIMIT_NAMESPACE):
                    return True
                reset_at, _ = self.limiter.get_window_stats(self.item, LIMIT_NAMESPACE)
                wait = max(reset_at - time.time(), 0.002) + self.margin
            if time.monotonic() + wait > deadline:
                return False
            stopping.wait(min(wait, LONGEST_NAP_SECONDS))
        return False

    def observe(self, status: int | None, headers: Mapping[str, str] | None) -> None:
        """Slow every worker down when the provider says less is left than we thought."""
        if not headers:
            return
        headers = {name.lower(): value for name, value in headers.items()}
        pause = None
        if status == 429:
            pause = _seconds(headers.get("retry-after")) or _seconds(headers.get("ratelimit-reset")) or 1.0
        elif _seconds(headers.get("ratelimit-remaining")) == 0 and self._room_left() > 0:
            # The provider has less left than our own window says (someone else shares the
            # account, or its window is not ours): nobody sends until its reset. When our window
            # is full too, it already holds every worker back, more precisely than the whole
            # seconds of ratelimit-reset.
            pause = _seconds(headers.get("ratelimit-reset"))
        if pause:
            milliseconds = int(min(pause, 60) * 1000)
            # Only ever lengthen a pause another worker set.
            if (self.redis.pttl(PAUSE_KEY) or 0) < milliseconds:
                self.redis.set(PAUSE_KEY, "1", px=milliseconds)
            self._no_pause_until = 0.0

    def _room_left(self) -> int:
        return self.limiter.get_window_stats(self.item, LIMIT_NAMESPACE).remaining

    def pause_left(self) -> float:
        """Seconds every worker must still wait. A finding of "no pause" is trusted for
        NO_PAUSE_TRUSTED_SECONDS in this process (one Redis round trip fewer per email at high
        rates), so a pause another worker sets is seen that late at most; a pause is never cached."""
        now = time.monotonic()
        if now < self._no_pause_until:
            return 0.0
        left = self.redis.pttl(PAUSE_KEY)
        if left and left > 0:
            return left / 1000
        self._no_pause_until = now + NO_PAUSE_TRUSTED_SECONDS
        return 0.0


def _seconds(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


_limits: dict[tuple[int, int], ProviderRateLimit] = {}
_limits_lock = threading.Lock()


def rate_limit_for(redis: Redis, redis_url: str, per_second: int) -> ProviderRateLimit:
    """One limiter per Redis client and limit in a process (its Lua scripts are registered once)."""
    key = (id(redis), per_second)
    with _limits_lock:
        cached = _limits.get(key)
        if cached is None or cached.redis is not redis:
            cached = _limits[key] = ProviderRateLimit(redis, redis_url, per_second)
        return cached
