"""The email worker process: RQ on the email, dead-letter and bulk queues (in that order: bulk
email waits for transactional email), RQ's scheduler for delayed retries, and the relay.

We use RQ's SimpleWorker (no fork per job): the job reuses the process's database engine and HTTP
connection pool, which is most of the work saved, and the claim plus idempotency key already make a
duplicate delivery harmless. The relay, the retention purge (once a day) and the areas' passes are
periodic tasks (periodic.py), each in a thread of its own, each under a Redis lock so only one
worker's pass runs at a time across all workers.

Lifecycle: a worker started before Redis answers waits, with one log line per try; if Redis goes
away while it works (a restart), it waits the same way and carries on with a fresh RQ worker,
instead of printing a traceback per loop. SIGTERM lets the current email finish (RQ's warm
shutdown), and a delivery waiting for a rate-limit slot gives up at once (its row is released).
"""

from __future__ import annotations

import logging
import signal
import threading
import time

import redis
from rq import SimpleWorker
from rq.executions import Execution
from rq.scheduler import RQScheduler
from rq.serializers import JSONSerializer
from rq.utils import now as rq_now
from rq.worker import WorkerStatus

from portal.core.heartbeat import start_heartbeat
from portal.core.logs import configure_logging
from portal.outbox.ground.handles import PortalContext
from portal.outbox.ground.periodic import PeriodicTask, start_periodic
from portal.outbox.ground.queues import BULK_EMAIL_QUEUE, dead_letter_queue, email_queue, queue_named
from portal.outbox.hear.receipt_lookup import lookup_task
from portal.outbox.hear.suppression_comparison import comparison_task
from portal.outbox.operate.retention import purge_task
from portal.outbox.send.consumer import use_context
from portal.outbox.send.rate_limit import stopping
from portal.outbox.write.relay import relay_task

log = logging.getLogger("portal.worker")
REDIS_WAIT_CAP_SECONDS = 10
REDIS_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


class EmailWorker(SimpleWorker):
    """RQ's SimpleWorker, which also tells a delivery waiting for a rate slot to give up on SIGTERM,
    and spares Redis the round trips of a heartbeat per job and of a suspension check per job.

    RQ sends its worker heartbeat (a last_heartbeat field and two TTLs, three round trips) before
    and after every job, and marks the worker idle twice between two jobs: 11 of the ~20 round trips
    RQ makes per email, measured with MONITOR. The worker's keys live worker_ttl + 60 s (8 minutes by
    default), so one heartbeat every few seconds, pipelined, keeps the worker exactly as alive in
    `rq info` and to RQ's own clean-ups; heartbeats RQ writes inside a pipeline of its own (with a
    job's start) cost no round trip and are kept, as is every state change. A job's execution
    record is written in the same transaction as its start.
    """

    HEARTBEAT_EVERY_SECONDS = 5.0
    SUSPENSION_CHECK_EVERY_SECONDS = 1.0
    _heartbeat_sent_at: float | None = None
    _suspension_checked_at: float | None = None
    _execution_pipeline = None

    def request_stop(self, signum, frame):
        stopping.set()
        super().request_stop(signum, frame)

    def heartbeat(self, timeout: int | None = None, pipeline=None):
        if pipeline is not None:
            return super().heartbeat(timeout, pipeline)
        now = time.monotonic()
        recent = self._heartbeat_sent_at is not None and now - self._heartbeat_sent_at < self.HEARTBEAT_EVERY_SECONDS
        if timeout is None and recent:
            return None
        with self.connection.pipeline(transaction=False) as batch:
            super().heartbeat(timeout, batch)
            batch.execute()
        self._heartbeat_sent_at = now
        return None

    def check_for_suspension(self, burst: bool):
        # RQ reads `rq suspend`'s key before every job, a round trip per email: once a second
        # stops a suspended worker as surely, at most a second of jobs later.
        now = time.monotonic()
        checked = self._suspension_checked_at
        if checked is not None and now - checked < self.SUSPENSION_CHECK_EVERY_SECONDS:
            return
        super().check_for_suspension(burst)
        self._suspension_checked_at = time.monotonic()

    def handle_execution_ended(self, job, queue, heartbeat_ttl: int):
        if job.success_callback is not None or job.failure_callback is not None:
            return super().handle_execution_ended(job, queue, heartbeat_ttl)
        # RQ writes the job's last heartbeat here, a round trip of its own, so that a callback has
        # its time; an email job has none, and the job's end is saved with its result just after.
        job.ended_at = job.last_heartbeat = rq_now()
        return None

    def prepare_execution(self, job):
        # RQ writes a job's execution record and then the job's start, two pipelines and two round
        # trips; this worker runs the job in its own process, so the record waits for the start.
        pipeline = self.connection.pipeline()
        execution = Execution.create(job, self.get_heartbeat_ttl(job), pipeline=pipeline, worker_name=self.name)
        self.executions[execution.id] = execution
        self.set_state(WorkerStatus.BUSY, pipeline=pipeline)
        self._execution_pipeline = pipeline
        return execution

    def prepare_job_execution(self, job, remove_from_intermediate_queue: bool = False):
        pipeline, self._execution_pipeline = self._execution_pipeline, None
        if pipeline is None:
            return super().prepare_job_execution(job, remove_from_intermediate_queue)
        # RQ's own steps, in the pipeline that holds the execution record: one transaction.
        with pipeline:
            heartbeat_ttl = self.get_heartbeat_ttl(job)
            self.heartbeat(heartbeat_ttl, pipeline=pipeline)
            job.heartbeat(rq_now(), heartbeat_ttl, pipeline=pipeline)
            job.prepare_for_execution(self.name, pipeline=pipeline)
            pipeline.persist(job.key)
            if remove_from_intermediate_queue:
                pipeline.lrem(
                    self.queue_class(job.origin, connection=self.connection).intermediate_queue_key, 1, job.id
                )
            pipeline.execute()
        self.procline(f"Processing {job.func_name} from {job.origin} since {time.time()}")
        return None

    def set_state(self, state: str, pipeline=None):
        if pipeline is None and state == self.get_state():
            return  # already recorded: RQ marks the worker idle after a job and again before the next
        super().set_state(state, pipeline)


def worker_queues(redis) -> list:
    """Every queue the portal publishes to has this worker as its consumer. In this order: RQ
    takes the next job from the first non-empty queue, so bulk email waits for transactional email."""
    return [email_queue(redis), dead_letter_queue(redis), queue_named(redis, BULK_EMAIL_QUEUE)]


def _scheduler_loop(ctx: PortalContext, stop: threading.Event) -> None:
    """RQ's scheduler (it moves delayed retries onto the queue when due), in a thread of ours
    instead of RQ's own process, which dies with a chain of tracebacks when Redis restarts and is
    not started again for minutes. One line when Redis goes away, one when it is back."""
    scheduler = RQScheduler(
        [q.name for q in worker_queues(ctx.redis)], connection=ctx.redis, serializer=JSONSerializer, interval=1
    )
    redis_away = False
    while not stop.wait(scheduler.interval):
        try:
            if scheduler.should_reacquire_locks:
                scheduler.acquire_locks()
            if scheduler.acquired_locks:
                scheduler.heartbeat()
                scheduler.enqueue_scheduled_jobs()
            if redis_away:
                log.info("scheduler: Redis answers again")
                redis_away = False
        except REDIS_ERRORS as error:
            if not redis_away:
                log.warning("scheduler: Redis is unavailable (%s); delayed retries wait", type(error).__name__)
                redis_away = True
            scheduler.lock_acquisition_time = None  # take the locks again once Redis is back
    try:
        scheduler.release_locks()
    except REDIS_ERRORS:
        pass


def wait_for_redis(ctx: PortalContext, stop: threading.Event | None = None) -> bool:
    """Block until Redis answers, one log line per try; False if asked to stop first."""
    tries, pause = 0, 0.5
    while True:
        try:
            ctx.redis.ping()
            if tries:
                log.info("Redis answers after %d tries; working", tries + 1)
            return True
        except REDIS_ERRORS as error:
            tries += 1
            # The host and port only: the URL may carry a password.
            where = ctx.redis.connection_pool.connection_kwargs
            log.warning(
                "waiting for Redis at %s:%s (try %d, %s); next try in %.1f s",
                where.get("host", "?"),
                where.get("port", "?"),
                tries,
                type(error).__name__,
                pause,
            )
        if (stop or stopping).wait(pause) or stopping.is_set():
            return False
        pause = min(pause * 2, REDIS_WAIT_CAP_SECONDS)


def _exit_before_work(signum, frame) -> None:
    raise SystemExit(0)


def run_worker(ctx: PortalContext, *, burst: bool = False, periodic: tuple[PeriodicTask, ...] = ()) -> int:
    """Work both queues until stopped (or, with burst, until both are empty); `ctx` is the process's handles.

    `periodic`: the areas' passes (portal/outbox/ground/periodic.py), run beside the relay and the purge, not in burst mode."""
    configure_logging(ctx.settings.log_format)  # LOG_FORMAT: text, or one JSON object a line
    # RQ installs its own handlers only inside work(), after it has registered with Redis; a
    # SIGTERM before then would end the process at once, skipping atexit, and the heartbeat would
    # outlive the worker (/readyz would count a worker that is gone). Until then, stop cleanly.
    signal.signal(signal.SIGTERM, _exit_before_work)
    use_context(ctx)
    stopping.clear()
    stop = threading.Event()
    if not wait_for_redis(ctx):
        return 0
    if not burst:
        threading.Thread(target=_scheduler_loop, args=(ctx, stop), name="outbox-scheduler", daemon=True).start()
        start_periodic(
            ctx,
            (
                relay_task(ctx.settings),
                purge_task(ctx.settings),
                lookup_task(ctx.settings),
                comparison_task(ctx.settings),
                *periodic,
            ),
            stop,
        )
        start_heartbeat(ctx.redis, stop)  # /readyz: how long ago some worker last showed it is alive
    # RQ waits for a job with a blocking call of several minutes and sets its connection's socket
    # timeout to outlast it, but only for connections made after it does so: the process's client
    # (5 s, for every other call) has some already, and an idle worker would time out every 5 s.
    dequeue_redis = redis.Redis.from_url(ctx.settings.redis_url, socket_connect_timeout=5)
    try:
        while True:
            worker = EmailWorker(worker_queues(dequeue_redis), connection=dequeue_redis, serializer=JSONSerializer)
            # RQ logs its own "could not connect" line per try while it waits for a job; anything it
            # cannot ride out ends work() with one error line, and we wait for Redis and start again.
            # In burst mode RQ moves due retries itself, once, without a process of its own.
            worker.work(burst=burst, with_scheduler=burst, logging_level="WARNING")
            if burst or stopping.is_set() or worker._stop_requested:
                break
            if not wait_for_redis(ctx):
                break
    finally:
        stop.set()
        dequeue_redis.close()
        ctx.db.dispose()
    return 0
