"""Retention: personal data the engine keeps only as long as it is useful.

- A receipt's stored fields (`email_receipts.payload`) are deleted after RECEIPT_RETENTION_DAYS;
  the row's type, times, outcome and IDs stay, so counts and deduplication still work.
- A settled outbox row's recipient and template input are erased after OUTBOX_RETENTION_DAYS; its
  family, status, key and times stay for the record. Rows still waiting or in flight are never
  touched: they still have an email to send.

Run by `flask outbox purge` and once a day by the worker (`purge_task`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database
from portal.core.driver import Statement
from portal.core.i18n import N_
from portal.core.settings import Settings
from portal.outbox.ground.periodic import PeriodicTask
from portal.outbox.ground.rows import ERASE_OUTBOX, ERASED_RECIPIENT
from portal.outbox.ground.statuses import SETTLED, sql_list

log = logging.getLogger("portal.worker")
PURGE_LOCK_KEY = "portal:outbox:purge-daily"


_PURGE_RECEIPTS = Statement(
    "UPDATE email_receipts SET payload = NULL WHERE payload IS NOT NULL AND received_at < :cutoff"
)

# A shared input goes with the last row that used it.
_DELETE_UNUSED_SHARED = Statement(
    """
    DELETE FROM email_shared_inputs
    WHERE NOT EXISTS (SELECT 1 FROM email_outbox o WHERE o.shared_input_id = email_shared_inputs.id)
    """
)


@dataclass(frozen=True)
class PurgeReport:
    receipt_bodies_deleted: int
    outbox_rows_erased: int

    def summary(self) -> str:
        return f"{self.receipt_bodies_deleted} receipt bodies deleted, {self.outbox_rows_erased} outbox rows erased"


def purge(db: Database, settings: Settings, *, now: datetime) -> PurgeReport:
    """Erase what the retention rules say is past keeping at `now`."""
    receipts_cutoff = clock.iso_in(-settings.receipt_retention_days * 86400, now)
    outbox_cutoff = clock.iso_in(-settings.outbox_retention_days * 86400, now)
    with db.write() as conn:
        receipts = _PURGE_RECEIPTS(conn, {"cutoff": receipts_cutoff}).rowcount
        erased = ERASE_OUTBOX(conn, {"cutoff": outbox_cutoff}).rowcount
        if erased:
            _DELETE_UNUSED_SHARED(conn, {})
    return PurgeReport(receipt_bodies_deleted=receipts, outbox_rows_erased=erased)


@dataclass(frozen=True)
class Kept:
    """One kind of personal data the engine holds: how much, the oldest, and when that one goes
    (None: not by age; `rule` says when instead). `what` and `rule` are messages (N_) the console
    words, `days` the value of `rule`'s placeholder."""

    what: str
    count: int
    oldest: str | None
    oldest_goes_at: str | None
    rule: str
    days: int | None = None


_KEPT = sa.text(
    f"""
    SELECT (SELECT COUNT(*) FROM email_frozen_payloads) AS payloads,
           (SELECT MIN(created_at) FROM email_frozen_payloads) AS oldest_payload,
           (SELECT COUNT(*) FROM email_receipts WHERE payload IS NOT NULL) AS receipts,
           (SELECT MIN(received_at) FROM email_receipts WHERE payload IS NOT NULL) AS oldest_receipt,
           (SELECT COUNT(*) FROM email_outbox
            WHERE status IN {sql_list(SETTLED)} AND recipient != '{ERASED_RECIPIENT}') AS settled,
           (SELECT MIN(updated_at) FROM email_outbox
            WHERE status IN {sql_list(SETTLED)} AND recipient != '{ERASED_RECIPIENT}') AS oldest_settled
    """
)


def retention_glance(db: Database, settings: Settings) -> list[Kept]:
    """What the engine holds now and when the retention rules take it (the daily purge)."""
    with db.read() as conn:
        row = conn.execute(_KEPT).mappings().one()

    def goes(oldest: str | None, days: int) -> str | None:
        return clock.iso(clock.parse(oldest) + timedelta(days=days)) if oldest else None

    receipt_days, outbox_days = settings.receipt_retention_days, settings.outbox_retention_days
    return [
        Kept(
            N_("Frozen email contents"),
            row["payloads"],
            row["oldest_payload"],
            None,
            N_("each goes when the provider accepts its email (or its batch settles)"),
        ),
        Kept(
            N_("Receipt bodies"),
            row["receipts"],
            row["oldest_receipt"],
            goes(row["oldest_receipt"], receipt_days),
            N_("kept %(days)d days after they arrive; their type, time and outcome stay"),
            receipt_days,
        ),
        Kept(
            N_("Settled emails' recipients and inputs"),
            row["settled"],
            row["oldest_settled"],
            goes(row["oldest_settled"], outbox_days),
            N_("erased %(days)d days after the email's last change; its status, key and times stay"),
            outbox_days,
        ),
    ]


def purge_task(settings: Settings) -> PeriodicTask:
    """The purge as the worker runs it: at most once a day across all workers. Every relay interval
    a worker asks for the day's lock; it is held for the day and never released, so only the first
    to ask each day purges (and a pass that failed waits for the next day, as a finished one does)."""
    return PeriodicTask(
        "retention-purge",
        settings.relay_interval_seconds,
        _purge_once,
        lock_seconds=86400,
        release_after_pass=False,
        first_pass_at_start=False,
        lock_name=PURGE_LOCK_KEY,
    )


def _purge_once(ctx, now: datetime) -> None:
    log.info("retention purge: %s", purge(ctx.db, ctx.settings, now=now).summary())
