"""The email worker process: RQ on both queues, RQ's scheduler for delayed retries, and the relay.

We use RQ's SimpleWorker (no fork per job): the job reuses the process's database engine and HTTP
connection pool, which is most of the work saved, and the claim plus idempotency key already make a
duplicate delivery harmless. The relay runs in a thread on a fixed interval; a Redis lock with an
expiry lets only one worker's pass run at a time across all workers.
"""

from __future__ import annotations

import logging
import threading
import uuid

from rq import SimpleWorker
from rq.serializers import JSONSerializer

from portal.outbox.consumer import use_context
from portal.outbox.handles import EmailHandles
from portal.outbox.periodic import PeriodicTask, start_periodic
from portal.outbox.queues import dead_letter_queue, email_queue
from portal.outbox.relay import relay_pass

log = logging.getLogger("portal.worker")
RELAY_LOCK_KEY = "portal:outbox:relay-lock"


def worker_queues(redis) -> list:
    """Every queue the portal publishes to has this worker as its consumer."""
    return [email_queue(redis), dead_letter_queue(redis)]


def run_relay_once_with_lock(ctx: EmailHandles) -> bool:
    """One relay pass, unless another worker holds the lock; True if this call ran it."""
    token = uuid.uuid4().hex
    lock_seconds = max(ctx.settings.relay_interval_seconds, 30)
    if not ctx.redis.set(RELAY_LOCK_KEY, token, nx=True, ex=lock_seconds):
        return False
    try:
        report = relay_pass(ctx.db, ctx.redis, ctx.settings)
        if report.published:
            log.info("relay published %d outbox rows (queued=%s)", len(report.published), report.queued)
    finally:
        # Release only our own lock (compare-and-delete in one step).
        ctx.redis.eval(
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0",
            1,
            RELAY_LOCK_KEY,
            token,
        )
    return True


def _relay_loop(ctx: EmailHandles, stop: threading.Event) -> None:
    while not stop.wait(ctx.settings.relay_interval_seconds):
        try:
            run_relay_once_with_lock(ctx)
        except Exception as error:  # Redis or the database is down: try again next interval
            log.warning("relay pass failed: %s", type(error).__name__)


def run_worker(ctx: EmailHandles, *, burst: bool = False, periodic: tuple[PeriodicTask, ...] = ()) -> int:
    """Work both queues until stopped (or, with burst, until both are empty); `ctx` is the process's handles.

    `periodic`: the areas' passes (portal/outbox/periodic.py), run beside the relay, not in burst mode."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    use_context(ctx)
    worker = SimpleWorker(worker_queues(ctx.redis), connection=ctx.redis, serializer=JSONSerializer)
    stop = threading.Event()
    if not burst:
        threading.Thread(target=_relay_loop, args=(ctx, stop), name="outbox-relay", daemon=True).start()
        start_periodic(ctx, periodic, stop)
    try:
        worker.work(burst=burst, with_scheduler=True, logging_level="WARNING")
    finally:
        stop.set()
        ctx.db.dispose()
    return 0
