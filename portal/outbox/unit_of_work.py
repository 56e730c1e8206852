"""The one way an area writes rows that send email: one transaction, then publication.

    with write_then_publish(ctx, now=now) as work:
        ... write the domain rows on work.conn ...
        work.add(intent)
    return Result(..., queued=work.queued)

The block is a single `db.write()`: the domain rows and their outbox rows commit together or not
at all. Only after the commit are the new rows published to the queue; a block that raises
publishes nothing. A block that returns early (a replay that writes nothing) still commits.
`now` is the caller's moment (its request's, its pass's): the rows are created and published at it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import sqlalchemy as sa

from portal.core.settings import Settings
from portal.outbox.intents import EmailIntent, add_outbox_rows
from portal.outbox.publish import PublishResult, publish_outbox_rows


class EmailWork:
    """The open transaction of a `write_then_publish` block and the emails added in it."""

    def __init__(self, conn: sa.Connection, settings: Settings, now: datetime):
        self.conn = conn
        self.settings = settings
        self.now = now
        self.outbox_ids: list[str] = []
        self.publication: PublishResult | None = None

    def add(self, *intents: EmailIntent) -> list[str]:
        """Add intents in this transaction; returns their outbox IDs (a replayed key keeps its row)."""
        ids = add_outbox_rows(self.conn, list(intents), self.settings, now=self.now)
        self.outbox_ids.extend(ids)
        return ids

    @property
    def queued(self) -> bool:
        """False when the emails are committed but wait for the relay (Redis did not take them)."""
        return self.publication is None or self.publication.queued


@contextmanager
def write_then_publish(handles, *, now: datetime, request_id: str | None = None) -> Iterator[EmailWork]:
    """`handles` has `db`, `redis` and `settings` (a PortalContext)."""
    with handles.db.write() as conn:
        work = EmailWork(conn, handles.settings, now)
        yield work
    work.publication = publish_outbox_rows(
        handles.db,
        handles.redis,
        work.outbox_ids,
        request_id,
        handles.settings.outbox_job_timeout_seconds,
        families=handles.families,
        batch_size=handles.settings.outbox_batch_size,
        now=now,
    )
