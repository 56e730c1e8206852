"""Passes an area asks the worker to run on an interval, one worker at a time (e.g. the report schedule).

The engine knows no area: worker.py hands `run_worker` the tasks. Each pass runs under a Redis lock
with an expiry, so only one worker's pass runs at a time across all workers, and a worker that dies
mid-pass frees the lock when it expires. The lock only saves duplicated work: a pass must be safe to
run twice (the report schedule's run rows are unique per company and period).

Why not RQ's cron scheduler: it is another process (`rq cron`) that enqueues a job per tick, with
no lock between two schedulers, and it needs rq >= 2.5 and croniter. The catch-up lives in the pass
itself (it sends every period closed since, whenever it runs), so a fixed interval inside the
worker we already run is enough, and `make run` starts nothing new.

Each pass reads the clock once, when it starts, and hands that moment to the task.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from portal.core import clock

log = logging.getLogger("portal.worker")
_RELEASE_OWN_LOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


@dataclass(frozen=True)
class PeriodicTask:
    name: str  # also the lock's name: portal:periodic:<name>
    interval_seconds: float
    run: Callable[[object, datetime], object]  # called with the worker's handles and the pass's moment
    lock_seconds: float = 600  # longer than a pass can take; a dead worker's lock ends with it

    @property
    def lock_key(self) -> str:
        return f"portal:periodic:{self.name}"


def run_once_with_lock(ctx, task: PeriodicTask, *, now: datetime) -> bool:
    """One pass of the task at `now`, unless another worker holds its lock; True if this call ran it."""
    token = uuid.uuid4().hex
    if not ctx.redis.set(task.lock_key, token, nx=True, ex=int(max(task.lock_seconds, task.interval_seconds))):
        return False
    try:
        task.run(ctx, now)
    finally:
        ctx.redis.eval(_RELEASE_OWN_LOCK, 1, task.lock_key, token)
    return True


def _loop(ctx, task: PeriodicTask, stop: threading.Event) -> None:
    # The first pass runs at start: a worker back from downtime catches up at once.
    while not stop.is_set():
        try:
            run_once_with_lock(ctx, task, now=clock.utcnow())
        except Exception as error:  # Redis or the database is down: try again next interval
            log.warning("%s pass failed: %s", task.name, type(error).__name__)
        stop.wait(task.interval_seconds)


def start_periodic(ctx, tasks, stop: threading.Event) -> None:
    for task in tasks:
        threading.Thread(target=_loop, args=(ctx, task, stop), name=f"periodic-{task.name}", daemon=True).start()
