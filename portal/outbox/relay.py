"""The relay: publish rows left pending, and re-publish rows whose message may be lost.

The database row is the truth; Redis may lose every key and nothing is lost, because this pass
finds the rows again: `pending` (publication never recorded), `enqueued` for too long, `retry`
well past its time, and `processing` whose claim expired (a worker died mid-delivery).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.db import Database
from portal.outbox import clock
from portal.outbox.publish import PublishResult, publish_outbox_rows
from portal.outbox.statuses import ENQUEUED, PENDING, PROCESSING, RETRY
from portal.settings import Settings

BATCH = 500


@dataclass(frozen=True)
class RelayReport:
    published: tuple[str, ...]
    queued: bool
    error: str | None = None


def rows_to_publish(db: Database, settings: Settings, limit: int = BATCH) -> list[str]:
    now = clock.utcnow()
    stale = clock.iso_in(-settings.outbox_republish_after_seconds, now)
    with db.read() as conn:
        return list(
            conn.execute(
                sa.text(
                    f"""
                    SELECT id FROM email_outbox
                    WHERE provider_message_id IS NULL AND (
                        status = '{PENDING}'
                        OR (status = '{ENQUEUED}' AND COALESCE(enqueued_at, updated_at) <= :stale)
                        OR (status = '{RETRY}' AND next_attempt_at <= :stale)
                        OR (status = '{PROCESSING}' AND claim_expires_at <= :now))
                    ORDER BY created_at LIMIT :limit
                    """
                ),
                {"stale": stale, "now": clock.iso(now), "limit": limit},
            ).scalars()
        )


def relay_pass(db: Database, redis, settings: Settings) -> RelayReport:
    ids = rows_to_publish(db, settings)
    if not ids:
        return RelayReport(published=(), queued=True)
    result: PublishResult = publish_outbox_rows(db, redis, ids, request_id="relay")
    return RelayReport(published=result.outbox_ids, queued=result.queued, error=result.error)
