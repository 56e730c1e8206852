"""Worker heartbeats in Redis, and how old the newest one is (for /readyz).

Each worker process writes its name and the time into one sorted set every HEARTBEAT_SECONDS, from
a thread of its own, so a long delivery does not stop it; `newest_heartbeat` answers how old the
newest beat is and how many workers beat recently. Entries of workers that stopped long ago are
trimmed as beats are written, so the set stays as small as the fleet.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass

log = logging.getLogger(__name__)
HEARTBEATS_KEY = "portal:worker-heartbeats"
HEARTBEAT_SECONDS = 10
# /readyz fails when the newest beat is older than this: several missed beats, not one slow one.
STALE_AFTER_SECONDS = 60
FORGET_AFTER_SECONDS = 86400


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def beat(redis, name: str, now: float | None = None) -> None:
    now = time.time() if now is None else now
    with redis.pipeline() as pipe:
        pipe.zadd(HEARTBEATS_KEY, {name: now})
        pipe.zremrangebyscore(HEARTBEATS_KEY, "-inf", now - FORGET_AFTER_SECONDS)
        pipe.execute()


def start_heartbeat(redis, stop: threading.Event, name: str | None = None) -> threading.Thread:
    """Beat now, then every HEARTBEAT_SECONDS until `stop` is set (a Redis outage skips beats)."""
    name = name or worker_name()

    def run():
        while True:
            try:
                beat(redis, name)
            except Exception as error:  # Redis away: /readyz will say so once the beats are stale
                log.warning("worker heartbeat not written: %s", type(error).__name__)
            if stop.wait(HEARTBEAT_SECONDS):
                break

    def forget():
        try:
            redis.zrem(HEARTBEATS_KEY, name)
        except Exception:
            pass

    # A worker that stops says so as it exits (this thread may not get to run again), rather than
    # going stale: /readyz then counts only the workers that are there.
    atexit.register(forget)
    thread = threading.Thread(target=run, name="worker-heartbeat", daemon=True)
    thread.start()
    return thread


@dataclass(frozen=True)
class Heartbeats:
    newest_age_seconds: float | None  # None: no worker has ever beaten (or all stopped)
    live_workers: int  # workers whose last beat is fresher than STALE_AFTER_SECONDS

    @property
    def fresh(self) -> bool:
        return self.newest_age_seconds is not None and self.newest_age_seconds <= STALE_AFTER_SECONDS


def newest_heartbeat(redis, now: float | None = None) -> Heartbeats:
    now = time.time() if now is None else now
    newest = redis.zrevrange(HEARTBEATS_KEY, 0, 0, withscores=True)
    live = redis.zcount(HEARTBEATS_KEY, now - STALE_AFTER_SECONDS, "+inf")
    age = max(now - newest[0][1], 0.0) if newest else None
    return Heartbeats(newest_age_seconds=age, live_workers=live)
