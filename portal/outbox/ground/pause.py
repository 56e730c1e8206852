"""An operator's pause of sending: all of it, or one family, until someone resumes it.

Distinct from the provider's pause (send/rate_limit.py's PAUSE_KEY): that one is the provider's
Retry-After, ends by itself within a minute and holds a delivery back *waiting*; this one is a
person's decision, lasts until a person ends it, and sends a delivery *home*: its claim is given
back (no attempt used, no failure), its message is parked, and the resume publishes the parked
messages again, transactional (the email queue) before campaigns (the bulk queue), each in the
order they were parked.

The switch lives in Redis, which every worker shares, as one hash (PAUSED_KEY: scope → who, why,
when; the scope is a family name or ALL). A delivery asks `gate` immediately before its provider
request: one script that, unless a pause of its family or of all holds, records the delivery as
*passing* (a sorted set, scored by when the record expires) and lets it through. The request
follows, and `passed` removes the record once its answer came. Checking and recording in one
script is what makes a pause exact: once the pause is in the hash no delivery passes, and a
delivery that passed before is in the set; `settle` waits for that set to empty, so when it
returns (the pause is *confirmed*) no request of a paused family can still leave.

No contact detail is ever written here: the hash holds a user ID and the operator's reason, the
parked sets hold outbox IDs.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass

from redis import Redis

from portal.outbox.ground.queues import BULK_EMAIL_QUEUE, EMAIL_QUEUE

ALL = "*"
PAUSED_KEY = "portal:outbox:paused"
PASSING_KEY = "portal:outbox:passing"
# One sorted set of parked message IDs per queue, scored by when each was first parked.
PARKED_PREFIX = "portal:outbox:parked:"
# The order the resume publishes in: transactional email first, then campaigns.
RESUME_ORDER = (EMAIL_QUEUE, BULK_EMAIL_QUEUE)
# A passing record outlives its request by this much if the worker dies mid-request.
PASSING_MARGIN_SECONDS = 5.0

_GATE = """
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    return 0
end
redis.call('zadd', KEYS[2], ARGV[4], ARGV[3])
return 1
"""


@dataclass(frozen=True)
class Pause:
    scope: str  # a family name, or ALL
    actor_user_id: int | None  # None: from the command line
    reason: str
    at: str  # ISO time the pause began


def pauses(redis: Redis) -> list[Pause]:
    """Every pause that holds now, all sending first, then by family name."""
    found = []
    for scope, value in (redis.hgetall(PAUSED_KEY) or {}).items():
        scope = scope.decode() if isinstance(scope, bytes) else scope
        data = json.loads(value)
        found.append(Pause(scope, data.get("actor_user_id"), data.get("reason", ""), data.get("at", "")))
    return sorted(found, key=lambda pause: (pause.scope != ALL, pause.scope))


def holds_for(redis: Redis, family: str) -> bool:
    """Whether a pause of `family` or of all sending holds now."""
    return any(value is not None for value in redis.hmget(PAUSED_KEY, [ALL, family]))  # one round trip


def set_pause(redis: Redis, pause: Pause) -> None:
    value = {"actor_user_id": pause.actor_user_id, "reason": pause.reason, "at": pause.at}
    redis.hset(PAUSED_KEY, pause.scope, json.dumps(value))


def clear_pause(redis: Redis, scope: str) -> bool:
    """End the pause of `scope`; False if none held."""
    return bool(redis.hdel(PAUSED_KEY, scope))


def gate(redis: Redis, family: str, hold_seconds: float) -> str | None:
    """Immediately before a provider request: a token to hand to `passed` once its answer came,
    or None when a pause of `family` or of all holds (then no request may be made)."""
    token = uuid.uuid4().hex
    expires = time.time() + hold_seconds + PASSING_MARGIN_SECONDS
    gate_script = redis.register_script(_GATE)
    if gate_script(keys=[PAUSED_KEY, PASSING_KEY], args=[ALL, family, token, expires]) != 1:
        return None
    return token


def passed(redis: Redis, token: str) -> None:
    redis.zrem(PASSING_KEY, token)


def settle(redis: Redis, timeout: float) -> bool:
    """Wait until no delivery that passed the gate still has its request out (records past their
    expiry are of a worker that died: they no longer count); False if `timeout` came first."""
    deadline = time.monotonic() + timeout
    while True:
        redis.zremrangebyscore(PASSING_KEY, "-inf", time.time())
        if redis.zcard(PASSING_KEY) == 0:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def park(redis: Redis, queue: str, outbox_id: str) -> None:
    """Keep a paused delivery's message for the resume (the first time it was parked keeps its place)."""
    redis.zadd(PARKED_PREFIX + queue, {outbox_id: time.time()}, nx=True)


def parked(redis: Redis, queue: str) -> list[str]:
    return [
        value.decode() if isinstance(value, bytes) else value for value in redis.zrange(PARKED_PREFIX + queue, 0, -1)
    ]


def unpark(redis: Redis, queue: str, outbox_ids: list[str]) -> None:
    if outbox_ids:
        redis.zrem(PARKED_PREFIX + queue, *outbox_ids)
