"""The one way an area writes rows that send email: one transaction, then publication.

    with write_then_publish(ctx, now=now) as work:
        ... write the domain rows on work.conn ...
        work.add(intent)
    return Result(..., queued=work.queued)

The block is a single `db.write()`: the domain rows, their outbox rows and the batches those rows
ride in (composition.compose_steps) commit together or not at all. Only after the commit
are the new rows published to the queue, with one message per batch. The rows are written
`enqueued`, since they are published next (intents.py): a publication that succeeds writes
nothing more, one that fails records it in one more write. A block that raises publishes nothing. A block that returns early (a
replay that writes nothing) still commits. `now` is the caller's moment (its request's, its
pass's): the rows are created and published at it.

A write whose statements are all known before the first runs can be given whole instead
(`write_steps_then_publish`): on a libSQL server the domain rows, the outbox rows, their batches
and the reads the caller asks for are one request, where a `db.write()` costs one per statement.

If publication fails after the commit, the rows are `pending` with the reason and the relay
publishes them at its next pass, in the batches the write composed; the caller's request still
succeeds.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import sqlalchemy as sa

from portal.core.driver import DriverResult, Steps, Written, run_steps
from portal.core.settings import Settings
from portal.outbox.ground.families import FamilyRegistry
from portal.outbox.write.composition import COMPOSED, carried_step, carriers, compose_steps
from portal.outbox.write.intents import EmailIntent, WrittenWith, outbox_row_steps, write_outbox_rows
from portal.outbox.write.publish import PublishResult, publish_outbox_rows


class EmailWork:
    """The open transaction of a `write_then_publish` block and the emails added in it."""

    def __init__(self, conn: sa.Connection, settings: Settings, now: datetime):
        self.conn = conn
        self.settings = settings
        self.now = now
        self.outbox_ids: list[str] = []
        self.written: set[str] = set()  # the IDs of rows this block wrote (not a replay's, not named ones)
        self.carriers: list[str] | None = None  # the messages to publish, once composed
        self.publication: PublishResult | None = None
        self._families: dict[str, str] = {}

    def add(self, *intents: EmailIntent) -> list[str]:
        """Add intents in this transaction; returns their outbox IDs (a replayed key keeps its row)."""
        added = write_outbox_rows(self.conn, list(intents), self.settings, now=self.now, publishing=True)
        ids = added.ids
        self.outbox_ids.extend(ids)
        self.written.update(added.written)
        self._families.update(zip(ids, (intent.family.name for intent in intents), strict=True))
        return ids

    def compose(self, families: FamilyRegistry) -> None:
        """Compose the added rows into batches, in this transaction (the block's last statements).

        Rows a block names in `outbox_ids` itself (the console's retry of committed rows) were
        written before: publication composes those as it composes the relay's."""
        added = [outbox_id for outbox_id in self.outbox_ids if outbox_id in self._families]
        rows = [(outbox_id, self._families[outbox_id], self.settings.portal_env) for outbox_id in added]
        steps = compose_steps(rows, families.batchable_names(), self.settings.outbox_batch_size, now=self.now)
        batch_of: dict[str, str | None] = dict.fromkeys(added)
        written = steps.written(run_steps(self.conn, steps))
        if steps and written[COMPOSED].rowcount:  # batches were written: which rows joined which
            statement, values = carried_step(added)
            batch_of.update({row.id: row.batch_id for row in statement(self.conn, values).all()})
        self.carriers = carriers(self.outbox_ids, batch_of) if len(added) == len(self.outbox_ids) else None

    @property
    def queued(self) -> bool:
        """False when the emails are committed but wait for the relay (Redis did not take them)."""
        return self.publication is None or self.publication.queued


@contextmanager
def write_then_publish(handles, *, now: datetime, request_id: str | None = None) -> Iterator[EmailWork]:
    """`handles` has `db`, `redis`, `settings` and `families` (a PortalContext)."""
    with handles.db.write() as conn:
        work = EmailWork(conn, handles.settings, now)
        yield work
        work.compose(handles.families)
    recorded = work.written.issuperset(work.outbox_ids)  # every row is `enqueued` from the commit
    work.publication = _publish(handles, work.outbox_ids, work.carriers, request_id, now, recorded)


# The step that reads which batch each new row joined (named so a caller's steps cannot take its name).
CARRIED = "outbox_rows_and_their_batches"


class WrittenSteps:
    """What `write_steps_then_publish` wrote: each named step's result, the outbox rows that are
    there (in the order of the intents) and their publication."""

    def __init__(self, results: Written, outbox_ids: list[str], publication: PublishResult | None):
        self.results = results
        self.outbox_ids = outbox_ids
        self.publication = publication

    def __getitem__(self, name: str) -> DriverResult:
        return self.results[name]

    @property
    def queued(self) -> bool:
        """False when the emails are committed but wait for the relay (Redis did not take them)."""
        return self.publication is None or self.publication.queued


def write_steps_then_publish(
    handles,
    steps: Steps,
    intents: list[EmailIntent],
    *,
    now: datetime,
    written_with: WrittenWith | None = None,
    reads: Steps | None = None,
    request_id: str | None = None,
) -> WrittenSteps:
    """One write given whole (Database.write_steps): the caller's `steps`, then the `intents`' rows
    (with `written_with`, only those whose domain row the steps wrote: intents.WrittenWith), the
    batches they ride in, and the caller's `reads`, which see the write; published after the commit.

    The same promises as `write_then_publish`: all of it commits or none, a busy lock is waited for
    before anything ran, and an answer lost after the commit was asked is an AmbiguousCommitError,
    never sent again."""
    email_steps, candidates = outbox_row_steps(
        intents, handles.settings, now=now, written_with=written_with, publishing=True
    )
    environment = handles.settings.portal_env
    composition = compose_steps(
        [(outbox_id, intent.family.name, environment) for outbox_id, intent in zip(candidates, intents, strict=True)],
        handles.families.batchable_names(),
        handles.settings.outbox_batch_size,
        now=now,
    )
    whole = Steps().extend(steps).extend(email_steps).extend(composition)
    whole.add(CARRIED, *carried_step(candidates)).extend(reads or Steps())
    written = handles.db.write_steps(whole)
    batch_of = {row.id: row.batch_id for row in written[CARRIED].all()}
    outbox_ids = [outbox_id for outbox_id in candidates if outbox_id in batch_of]
    # Only rows these steps wrote are there (a replayed key's row is not): each is `enqueued` already.
    publication = _publish(handles, outbox_ids, carriers(candidates, batch_of), request_id, now, recorded=True)
    return WrittenSteps(written, outbox_ids, publication)


def _publish(
    handles,
    outbox_ids: list[str],
    carried_by: list[str] | None,
    request_id: str | None,
    now: datetime,
    recorded: bool,
):
    return publish_outbox_rows(
        handles.db,
        handles.redis,
        outbox_ids,
        request_id,
        handles.settings.outbox_job_timeout_seconds,
        families=handles.families,
        batch_size=handles.settings.outbox_batch_size,
        carriers=carried_by,
        now=now,
        recorded=recorded,
    )
