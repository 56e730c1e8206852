"""Passes the worker runs on an interval, one worker at a time: the engine's relay and retention purge
(relay.py, retention.py) and the areas' passes (e.g. the report schedule).

The engine knows no area: worker.py hands `run_worker` the areas' tasks. Each pass runs under a Redis
lock with an expiry (locks.py), so only one worker's pass runs at a time across all workers, and a
worker that dies mid-pass frees the lock when it expires. The lock only saves duplicated work: a pass
must be safe to run twice (the report schedule's run rows are unique per company and period). A task
whose lock outlives its pass (`release_after_pass=False`) runs at most once per lock period across
all workers, however often its interval comes round: that is how the purge runs once a day.

Each pass reads the clock once, when it starts, and hands that moment to the task: every decision
of the pass (what is due, what is stale, what is past keeping) is made at it.

Why not RQ's cron scheduler: it is another process (`rq cron`) that enqueues a job per tick, with
no lock between two schedulers, and it needs rq >= 2.5 and croniter. The catch-up lives in the pass
itself (it sends every period closed since, whenever it runs), so a fixed interval inside the
worker we already run is enough, and `make run` starts nothing new.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from portal.core import clock
from portal.outbox.ground.locks import try_lock

log = logging.getLogger("portal.worker")


@dataclass(frozen=True)
class PeriodicTask:
    name: str  # also the lock's name, portal:periodic:<name>, unless `lock_name` names another
    interval_seconds: float
    run: Callable[[object, datetime], object]  # called with the worker's handles and the pass's moment
    lock_seconds: float = 600  # longer than a pass can take; a dead worker's lock ends with it
    # False: the lock is left to expire, so the pass runs at most once per lock_seconds.
    release_after_pass: bool = True
    # False: the first pass comes one interval after the worker starts.
    first_pass_at_start: bool = True
    # A key older workers already use for this pass, so old and new workers share one lock in a deploy.
    lock_name: str | None = None

    @property
    def lock_key(self) -> str:
        return self.lock_name or f"portal:periodic:{self.name}"


def run_once_with_lock(ctx, task: PeriodicTask, *, now: datetime) -> bool:
    """One pass of the task at `now`, unless another worker holds its lock; True if this call ran it."""
    lock = try_lock(ctx.redis, task.lock_key, max(task.lock_seconds, task.interval_seconds))
    if lock is None:
        return False
    try:
        task.run(ctx, now)
    finally:
        if task.release_after_pass:
            lock.release()
    return True


def _loop(ctx, task: PeriodicTask, stop: threading.Event) -> None:
    # A first pass at start lets a worker back from downtime catch up at once.
    if not task.first_pass_at_start and stop.wait(task.interval_seconds):
        return
    while not stop.is_set():
        try:
            run_once_with_lock(ctx, task, now=clock.utcnow())
        except Exception as error:  # Redis or the database is down: try again next interval
            log.warning("%s pass failed: %s", task.name, type(error).__name__)
        stop.wait(task.interval_seconds)


def start_periodic(ctx, tasks, stop: threading.Event) -> None:
    for task in tasks:
        threading.Thread(target=_loop, args=(ctx, task, stop), name=f"periodic-{task.name}", daemon=True).start()
