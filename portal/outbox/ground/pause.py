"""An operator's pause of sending: all of it, or one family, until someone resumes it.

Distinct from the provider's pause (send/rate_limit.py's PAUSE_KEY): that one is the provider's
Retry-After, ends by itself within a minute and holds a delivery back *waiting*; this one is a
person's decision, lasts until a person ends it, and sends a delivery *home*: its claim is given
back (no attempt used, no failure) and its row is *parked* (`retry`, last_error SENDING_PAUSED,
due only after PARKED_SECONDS), until the resume makes it due and publishes it again.

Where it is kept:
- **The record** is the database's (`email_sending_pauses`, every pause and resume with who and
  why): a scope whose last action is a pause is paused. It is the truth, and Redis may lose
  everything: `restore` (the relay's every pass) puts a recorded pause back into Redis.
- **The switch** every worker reads is one Redis hash (PAUSED_KEY: scope → who, why, when; the
  scope is a family name or ALL).
- **A parked row** is the database's too, so the resume finds every one, in the order parked.

How a delivery meets it: in the same Lua script that takes its rate slot (send/rate_limit.py), no
round trip of its own. The script refuses the slot while a pause of the delivery's family or of all
holds; otherwise it takes the slot and records the delivery as *passing* (PASSING_KEY: a sorted set
of RQ job IDs, scored by when the record expires). The request follows the slot at once. Checking
and recording in one script is what makes a pause exact: once the pause is in the hash no slot is
given, and every delivery that took one before is in the set. `settle` waits until each of those
jobs has ended (RQ's own record of the job) or its record expired; when it returns (the pause is
*confirmed*), no request of a paused family can still leave. A delivery outside an RQ job (a test
calling the engine directly) is checked the same way but not recorded.

No contact detail is ever written here: the hash holds a user ID and the operator's reason, the
passing set holds job IDs.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import sqlalchemy as sa
from redis import Redis
from rq import get_current_job
from rq.job import Job, JobStatus

ALL = "*"
PAUSED_KEY = "portal:outbox:paused"
PASSING_KEY = "portal:outbox:passing"
PAUSE, RESUME = "pause", "resume"
# A passing record outlives its request by this much if the worker dies mid-request.
PASSING_MARGIN_SECONDS = 5.0
# A parked row is due again this long after it met the pause, should nobody resume it: the relay
# then publishes it once more, a worker meets the pause again and parks it again. Long enough that
# a long pause costs the queue nothing; the resume makes every parked row due at once.
PARKED_SECONDS = 3600.0


@dataclass(frozen=True)
class Pause:
    scope: str  # a family name, or ALL
    actor_user_id: int | None  # None: from the command line
    reason: str
    at: str  # ISO time the pause began


@dataclass(frozen=True)
class Gate:
    """What a delivery hands the slot script: its family, and the job to record as passing (None:
    no job, nothing recorded) until `expires` (epoch seconds)."""

    family: str
    job_id: str | None
    expires: float


def gate_for(family: str, request_seconds: float) -> Gate:
    """The gate of a delivery of `family` about to make a request that takes at most `request_seconds`."""
    job = get_current_job()
    return Gate(family, job.id if job is not None else None, time.time() + request_seconds + PASSING_MARGIN_SECONDS)


def pauses(redis: Redis) -> list[Pause]:
    """Every pause that holds now, all sending first, then by family name."""
    found = []
    for scope, value in (redis.hgetall(PAUSED_KEY) or {}).items():
        scope = scope.decode() if isinstance(scope, bytes) else scope
        data = json.loads(value)
        found.append(Pause(scope, data.get("actor_user_id"), data.get("reason", ""), data.get("at", "")))
    return sorted(found, key=lambda pause: (pause.scope != ALL, pause.scope))


def set_pause(redis: Redis, pause: Pause) -> None:
    redis.hset(PAUSED_KEY, pause.scope, _value(pause))


def clear_pause(redis: Redis, scope: str) -> bool:
    """End the pause of `scope`; False if none held."""
    return bool(redis.hdel(PAUSED_KEY, scope))


def _value(pause: Pause) -> str:
    return json.dumps({"actor_user_id": pause.actor_user_id, "reason": pause.reason, "at": pause.at})


# --- the record ------------------------------------------------------------------------------------

RECORD = sa.text(
    "INSERT INTO email_sending_pauses (scope, action, actor_user_id, reason, at)"
    " VALUES (:scope, :action, :actor, :reason, :at)"
)
# Each scope whose last action is a pause: the pauses that hold, as recorded.
_HELD = sa.text(
    f"""
    SELECT scope, actor_user_id, reason, at FROM email_sending_pauses AS p
    WHERE action = '{PAUSE}' AND id = (SELECT MAX(id) FROM email_sending_pauses WHERE scope = p.scope)
    """
)


def recorded_pauses(conn) -> list[Pause]:
    """The pauses that hold as recorded, read on `conn` (a read, or the write that just changed them)."""
    return [Pause(row.scope, row.actor_user_id, row.reason, row.at) for row in conn.execute(_HELD)]


def restore(db, redis: Redis) -> list[str]:
    """Put back into Redis every recorded pause it lost (a restart without its data): the scopes
    restored. Never ends a pause: a resume clears its own switch."""
    restored = []
    with db.read() as conn:
        held_now = recorded_pauses(conn)
    for held in held_now:
        if redis.hsetnx(PAUSED_KEY, held.scope, _value(held)):
            restored.append(held.scope)
    return restored


# --- confirming a pause ----------------------------------------------------------------------------


def settle(redis: Redis, timeout: float, *, nap: float = 0.02) -> bool:
    """Wait until no delivery that took its slot before the pause still has its request out: each
    recorded job has ended, or its record expired (a worker that died). False if `timeout` came first."""
    deadline = time.monotonic() + timeout
    while True:
        redis.zremrangebyscore(PASSING_KEY, "-inf", time.time())
        for job_id in redis.zrange(PASSING_KEY, 0, -1):
            job_id = job_id.decode() if isinstance(job_id, bytes) else job_id
            if not _running(redis, job_id):
                redis.zrem(PASSING_KEY, job_id)
        if redis.zcard(PASSING_KEY) == 0:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(nap)


def _running(redis: Redis, job_id: str) -> bool:
    """Whether RQ still has the job started (its end is written in the same pipeline as its result;
    a job kept no longer is not running)."""
    status = redis.hget(Job.key_for(job_id), "status")
    return status is not None and status.decode() == JobStatus.STARTED.value
