"""One provider rate limit shared by every worker, kept in Redis.

The provider allows RESEND_RATE_LIMIT_PER_SECOND requests per second for the whole account, and
answers 429 past it. Every worker takes a slot before each provider request, from a moving window
in Redis (the list the `limits` library keeps: one atomic Lua script per try, so no two workers
take the same slot). A worker that finds the window full sleeps until its oldest slot leaves it
instead of sending into a 429.

The provider's own headers have the last word: when an answer is a 429, or says nothing is left
(`ratelimit-remaining: 0`) while our window still has room, every worker pauses until
`retry-after` / `ratelimit-reset`, through one shared key.

The window is a little longer than a second (SLOT_MARGIN_SECONDS), for every slot: no two slots
the limit apart are less than 1 s + the margin apart, across all workers. `limits` reads the
window, but its own take knows only whole seconds, so the take is a script of ours on the same
list (_TAKE_SLOT: the library's check and record, with a window in fractions of a second). It does
not wait; the loop below does.

The same script is the operator's pause gate (ground/pause.py): given a delivery's `Gate`, it
refuses the slot while a pause of the delivery's family or of all sending holds, and records the
delivery as passing with the slot it gives. A request thus costs no round trip for the pause.

A wait is bounded: it gives up (the caller releases its claim and retries later, nothing sent)
when it would run past the caller's deadline, so waiting never holds a claim past its expiry, or
when the worker is asked to stop.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

from limits import RateLimitItemPerSecond
from limits.storage import RedisStorage
from redis import Redis

from portal.outbox.ground import metrics, pause

log = logging.getLogger(__name__)
LIMIT_NAMESPACE = "portal:provider"
PAUSE_KEY = "portal:provider:pause"
LONGEST_NAP_SECONDS = 0.1
NO_PAUSE_TRUSTED_SECONDS = 0.1
HEADROOM_DIVISOR = 25  # one slot of headroom per this many requests a second
# Below HEADROOM_DIVISOR requests per second there is no slot of headroom: the window is this much
# longer than a second instead, so a request cannot reach the provider's window together with the
# one the limit's slots before it carried. A request reaches the provider some time after its slot,
# and that time varies (a batch's body is built and sent after its seal's write). bench/campaign.py,
# 10,000 recipients at 5/s, 100 batch requests: without a margin 9 met a 429 (each pauses every
# worker a second), with 50 ms 2, with 100 ms none. The margin once held only for a worker that had
# waited for the oldest slot: one that found room took it a second after a younger slot, and 2 runs
# in 3 met one 429 (slots 1.002 s apart, arrivals 0.996 s). Since a batch is sealed before its slot
# (the request follows the slot at once), 70 ms is enough: 0 429s at 10,000 and at 100,000
# recipients, invitations meanwhile included, where 50 ms met one. A full window costs the margin's
# share of the rate: 100 ms held a 100,000-recipient campaign to 1/1.1 of the limit (ratio 1.11),
# 70 ms to 1.08.
SLOT_MARGIN_SECONDS = 0.07
# The list of `limits`' moving window (newest first, at most `limit` long), with a window of
# `window` seconds, fractions included: the slot is taken only if the limit's last slots are all
# older than that.
_TAKE_SLOT = """
local now, limit, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if ARGV[4] ~= '' and (redis.call('hexists', KEYS[2], ARGV[4]) == 1 or redis.call('hexists', KEYS[2], ARGV[5]) == 1) then
    return -1
end
local oldest = redis.call('lindex', KEYS[1], limit - 1)
if oldest and tonumber(oldest) >= now - window then
    return 0
end
redis.call('lpush', KEYS[1], ARGV[1])
redis.call('ltrim', KEYS[1], 0, limit - 1)
redis.call('pexpire', KEYS[1], math.ceil(window * 1000))
if ARGV[6] ~= '' then
    redis.call('zadd', KEYS[3], ARGV[7], ARGV[6])
end
return 1
"""
# A wait for a slot longer than this is long enough for a person to act in (a colleague
# deactivated, a campaign cancelled): the caller reads its rows once more before the slot. A slot
# taken at once costs no read: the claim that just committed was the check.
RECHECK_AFTER_WAIT_SECONDS = 0.05
T = TypeVar("T")
# What take_slot finds when an operator's pause holds the delivery's family: no slot was taken.
OPERATOR_PAUSED = "operator_paused"
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
        self.window = 1.0 + (SLOT_MARGIN_SECONDS if per_second < HEADROOM_DIVISOR else 0.0)
        self.storage = RedisStorage(redis_url, connection_pool=redis.connection_pool, key_prefix="portal-limits")
        self.slots = self.item.key_for(LIMIT_NAMESPACE)  # the window's list, as `limits` names it
        self._slots_in_redis = self.storage.prefixed_key(self.slots)
        self._take_slot = redis.register_script(_TAKE_SLOT)
        self._no_pause_until = 0.0

    def acquire(self, deadline: float) -> bool:
        """Take one slot; False if none came before `deadline` (time.monotonic()) or we must stop."""
        return self.take_slot(deadline)[0]

    @metrics.times_rate_limit_wait
    def take_slot(
        self, deadline: float, recheck: Callable[[], T | None] = lambda: None, gate: pause.Gate | None = None
    ) -> tuple[bool, T | str | None]:
        """Take a slot for one request: (True, None) once taken; (False, None) when none came before
        `deadline` (time.monotonic()) or we must stop; (False, found) when `recheck` found a reason
        not to send; (False, OPERATOR_PAUSED) when `gate` is given and an operator's pause holds it.

        A wait longer than RECHECK_AFTER_WAIT_SECONDS ends with `recheck()` before the slot is
        taken, not after: then nothing but the request itself follows a slot, and the provider's
        window sees our requests as far apart as ours spaced them (a read between the two let a
        request arrive late, and the next one on time drew a 429)."""
        taken = self.take(gate)
        while taken is not True:
            if taken == OPERATOR_PAUSED:
                return False, OPERATOR_PAUSED
            asked = time.monotonic()
            if not self.wait_for_room(deadline):
                return False, None
            if time.monotonic() - asked > RECHECK_AFTER_WAIT_SECONDS:
                found = recheck()
                if found is not None:
                    return False, found
            taken = self.take(gate)
        return True, None

    def take(self, gate: pause.Gate | None = None) -> bool | str:
        """Take a slot now if the window has one (one atomic script across every worker), no pause
        holds every worker back and this worker is not stopping: True; False otherwise, nothing
        taken. With a `gate`: OPERATOR_PAUSED, nothing taken, while an operator's pause holds it."""
        if stopping.is_set() or self.pause_left() > 0:
            return False
        gated = ("", "", "", 0) if gate is None else (pause.ALL, gate.family, gate.job_id or "", gate.expires)
        taken = self._take_slot(
            keys=[self._slots_in_redis, pause.PAUSED_KEY, pause.PASSING_KEY],
            args=[time.time(), self.item.amount, self.window, *gated],
        )
        return OPERATOR_PAUSED if taken == -1 else taken == 1

    def wait_for_room(self, deadline: float) -> bool:
        """Wait, taking nothing, until the window has room for a request: True then (another worker
        may still take it first), False if no room came before `deadline` or we must stop."""
        ready_at = None  # once the window was seen full: when its oldest slot has left it
        while not stopping.is_set():
            wait = self.pause_left()
            if wait <= 0:
                if ready_at is None:
                    oldest, taken = self._window()
                    if taken < self.item.amount:
                        return True
                    ready_at = time.monotonic() + max(oldest + self.window - time.time(), 0.002)
                wait = ready_at - time.monotonic()
                if wait <= 0:
                    return True
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
        elif _seconds(headers.get("ratelimit-remaining")) == 0 and self.room_left() > 0:
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

    def room_left(self) -> int:
        """Slots the shared window has free now."""
        return self.item.amount - self._window()[1]

    def _window(self) -> tuple[float, int]:
        """(when the oldest slot still in the window was taken, how many slots it holds)."""
        return self.storage.get_moving_window(self.slots, self.item.amount, self.window)

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
