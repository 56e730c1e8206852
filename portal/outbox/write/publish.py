"""Publishing committed outbox rows to the queue: only ever after the commit.

All envelopes of one call go out in one Redis pipeline, with three tries and a short doubling
pause. Rows move to `enqueued` only while they are still waiting and have no provider message ID,
so a late update cannot overwrite a claim or a settled row; rows their own write wrote `enqueued`
(`recorded`: intents.py says why) need no such write. If publishing fails the rows are `pending`
with the reason and the relay publishes them later; the caller's request still succeeds.
We may publish a row twice (a try whose answer was lost, then the relay): the claim makes that
harmless.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime

from redis import Redis
from rq import Queue

from portal.core.db import Database
from portal.core.log_context import current_request_id
from portal.core.settings import Settings
from portal.outbox.ground.families import FamilyRegistry
from portal.outbox.ground.queues import EMAIL_QUEUE, build_envelope, queue_named
from portal.outbox.ground.rows import record_publication
from portal.outbox.ground.statuses import ENQUEUED, PENDING
from portal.outbox.write.composition import messages_to_publish

log = logging.getLogger(__name__)
PUBLISH_TRIES = 3
FIRST_PAUSE_SECONDS = 0.05
JOB_FUNCTION = "portal.outbox.send.consumer.deliver_outbox_message"
DEAD_LETTER_FUNCTION = "portal.outbox.send.consumer.deliver_dead_letter"
# RQ's time limit for a delivery job: the claim (Settings.outbox_job_timeout_seconds); this is
# the default claim, for callers without settings.
JOB_TIMEOUT_SECONDS = Settings.outbox_claim_seconds


@dataclass(frozen=True)
class PublishResult:
    queued: bool
    outbox_ids: tuple[str, ...]
    error: str | None = None


def enqueue_envelopes(
    queue: Queue, outbox_ids: list[str], request_id: str | None = None, job_timeout: int = JOB_TIMEOUT_SECONDS
) -> None:
    """One pipeline for every envelope; raises if Redis does not take them."""
    jobs = [
        Queue.prepare_data(
            JOB_FUNCTION,
            args=(build_envelope(outbox_id, request_id),),
            timeout=job_timeout,
            meta={"attempt": 1},
            result_ttl=600,
            failure_ttl=7 * 86400,
        )
        for outbox_id in outbox_ids
    ]
    with queue.connection.pipeline() as pipe:
        queue.enqueue_many(jobs, pipeline=pipe)
        pipe.execute()


def publish_outbox_rows(
    db: Database,
    redis: Redis,
    outbox_ids: list[str],
    request_id: str | None = None,
    job_timeout: int = JOB_TIMEOUT_SECONDS,
    families: FamilyRegistry | None = None,
    batch_size: int = 1,
    *,
    now: datetime,
    carriers: list[str] | None = None,
    recorded: bool = False,
) -> PublishResult:
    """`families` names each row's queue, and which rows may ride in a batch; without it, every row
    goes to the email queue alone. `carriers`: the messages that carry these rows, when the write
    that wrote them composed their batches (unit_of_work.py). Without them, and with a
    `batch_size` above one, rows of a batchable family that no write composed (the relay's) are
    grouped into batches first (composition.messages_to_publish). One message carries each batch.

    The rows' publication is marked in one write: `enqueued` (unless the write that wrote them
    `recorded` it: they are `enqueued` from its commit), or `pending` with the reason. `now` is the caller's moment: a row published at it is not republished for a
    stale period."""
    if not outbox_ids:
        return PublishResult(queued=True, outbox_ids=())
    request_id = request_id or current_request_id()  # the web request's, carried to the worker's logs
    by_queue: dict[str, list[str]] = {}
    try:
        if carriers is None:
            carriers = _carriers(db, outbox_ids, families, batch_size, now)
    except Exception as exc:  # the rows wait for the relay, which composes them again
        error = f"publish_failed: {type(exc).__name__}"
        log.warning("outbox rows remain pending: their batches were not written (%s)", error)
        record_publication(db, outbox_ids, PENDING, error, now=now)
        return PublishResult(queued=False, outbox_ids=tuple(outbox_ids), error=error)
    for outbox_id in carriers:
        by_queue.setdefault(families.queue_for(outbox_id) if families else EMAIL_QUEUE, []).append(outbox_id)
    pause, error = FIRST_PAUSE_SECONDS, None
    for attempt in range(1, PUBLISH_TRIES + 1):
        try:
            for name, ids in by_queue.items():
                enqueue_envelopes(queue_named(redis, name), ids, request_id, job_timeout)
            error = None
            break
        except Exception as exc:  # any Redis failure: the rows are safe in the database
            error = f"publish_failed: {type(exc).__name__}"
            if attempt < PUBLISH_TRIES:
                time.sleep(pause)
                pause *= 2
    if error is None:
        if not recorded:
            record_publication(db, outbox_ids, ENQUEUED, None, now=now)
        return PublishResult(queued=True, outbox_ids=tuple(outbox_ids))
    log.warning("outbox rows remain pending after %d publish tries (%s): %s", PUBLISH_TRIES, error, outbox_ids)
    # Only a failure to record this state reaches the caller.
    record_publication(db, outbox_ids, PENDING, error, now=now)
    return PublishResult(queued=False, outbox_ids=tuple(outbox_ids), error=error)


def _carriers(db: Database, outbox_ids: list[str], families: FamilyRegistry | None, batch_size: int, now: datetime):
    """The IDs whose messages to publish: each row's own, or its batch's one."""
    if families is None or batch_size < 2:
        return list(outbox_ids)
    return messages_to_publish(db, outbox_ids, families.batchable_names(), batch_size, now=now)
