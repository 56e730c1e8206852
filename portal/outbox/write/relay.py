"""The relay: publish rows left pending, and re-publish rows whose message may be lost.

The database row is the truth; Redis may lose every key and nothing is lost, because this pass
finds the rows again: `pending` (publication never recorded), `enqueued` for too long, `retry`
well past its time, and `processing` whose claim expired (a worker died mid-delivery). Each
publication restarts a row's stale period (`relay_since`), so a message the workers have not yet
taken is republished once per period, not on every pass.

Each pass also puts back into Redis an operator's pause that Redis lost (ground/pause.py): the
database's record of it is the truth, as for rows.

The worker runs a pass every RELAY_INTERVAL_SECONDS (`relay_task`); `flask outbox relay` runs one now.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database
from portal.core.settings import Settings
from portal.outbox.ground import metrics, pause
from portal.outbox.ground.families import FamilyRegistry
from portal.outbox.ground.periodic import PeriodicTask
from portal.outbox.ground.statuses import UNSETTLED, sql_list
from portal.outbox.write.publish import PublishResult, publish_outbox_rows

log = logging.getLogger("portal.worker")
BATCH = 500
RELAY_LOCK_KEY = "portal:outbox:relay-lock"


@dataclass(frozen=True)
class RelayReport:
    published: tuple[str, ...]
    queued: bool
    error: str | None = None


# One range on one partial index, in index order: the cost is the number of due rows, not the
# size of the table (tests/outbox/test_relay.py asserts the plan).
RELAY_QUERY = sa.text(
    f"""
    SELECT id FROM email_outbox INDEXED BY email_outbox_relay
    WHERE relay_since <= :stale AND provider_message_id IS NULL AND status IN {sql_list(UNSETTLED)}
    ORDER BY relay_since LIMIT :limit
    """
)


def rows_to_publish(db: Database, settings: Settings, limit: int = BATCH, *, now: datetime) -> list[str]:
    """Rows whose message may be lost at `now`: pending, or quiet for a whole stale period (see relay_since)."""
    stale = clock.iso_in(-settings.outbox_republish_after_seconds, now)
    with db.read() as conn:
        return list(conn.execute(RELAY_QUERY, {"stale": stale, "limit": limit}).scalars())


def relay_pass(
    db: Database, redis, settings: Settings, families: FamilyRegistry | None = None, *, now: datetime
) -> RelayReport:
    """One pass at `now`, the pass's start. `families`: each row's queue (a campaign's rows stay on
    the bulk queue) and which rows may ride in a batch (rows that missed their publication are
    composed here, as publication would have)."""
    restored = pause.restore(db, redis)
    if restored:
        log.warning("an operator's pause was missing from Redis and is restored: %s", ", ".join(restored))
    ids = rows_to_publish(db, settings, now=now)
    if not ids:
        return RelayReport(published=(), queued=True)
    result: PublishResult = publish_outbox_rows(
        db,
        redis,
        ids,
        request_id="relay",
        job_timeout=settings.outbox_job_timeout_seconds,
        families=families,
        batch_size=settings.outbox_batch_size,
        now=now,
    )
    metrics.relay_published(len(result.outbox_ids), result.queued)
    return RelayReport(published=result.outbox_ids, queued=result.queued, error=result.error)


def relay_task(settings: Settings) -> PeriodicTask:
    """The relay as the worker runs it: a pass every RELAY_INTERVAL_SECONDS, the first one interval
    after start, one worker at a time."""
    return PeriodicTask(
        "relay",
        settings.relay_interval_seconds,
        _relay_once,
        lock_seconds=30,
        first_pass_at_start=False,
        lock_name=RELAY_LOCK_KEY,
    )


def _relay_once(ctx, now: datetime) -> None:
    report = relay_pass(ctx.db, ctx.redis, ctx.settings, families=ctx.families, now=now)
    if report.published:
        log.info("relay published %d outbox rows (queued=%s)", len(report.published), report.queued)
