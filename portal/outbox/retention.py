"""Retention: personal data the engine keeps only as long as it is useful.

- A receipt's stored fields (`email_receipts.payload`) are deleted after RECEIPT_RETENTION_DAYS;
  the row's type, times, outcome and IDs stay, so counts and deduplication still work.
- A settled outbox row's recipient and template input are erased after OUTBOX_RETENTION_DAYS; its
  family, status, key and times stay for the record. Rows still waiting or in flight are never
  touched: they still have an email to send.

Run by `flask outbox purge` and once a day by the worker (portal/outbox/worker.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from portal.core import clock
from portal.core.db import Database, Statement
from portal.core.settings import Settings
from portal.outbox.statuses import SETTLED, sql_list

ERASED_RECIPIENT = ""
ERASED_INPUT = "{}"

_PURGE_RECEIPTS = Statement(
    "UPDATE email_receipts SET payload = NULL WHERE payload IS NOT NULL AND received_at < :cutoff"
)
_ERASE_OUTBOX = Statement(
    f"""
    UPDATE email_outbox SET recipient = '{ERASED_RECIPIENT}', template_input = '{ERASED_INPUT}'
    WHERE status IN {sql_list(SETTLED)} AND updated_at < :cutoff AND recipient != '{ERASED_RECIPIENT}'
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
        erased = _ERASE_OUTBOX(conn, {"cutoff": outbox_cutoff}).rowcount
    return PurgeReport(receipt_bodies_deleted=receipts, outbox_rows_erased=erased)
