"""What /metrics reads from the database when it is scraped: the rows by family and status, the
oldest waiting, the recent accepted and receipted, and the reconciliation's figures. Nothing here
is counted by a process (metrics.py counts that), so every process and machine agrees.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, timedelta, tzinfo

import sqlalchemy as sa
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from portal.core import clock
from portal.outbox.ground.statuses import ALL, PENDING, RETRY
from portal.outbox.hear.reconciliation import FIGURES, reconcile
from portal.outbox.operate.reads import family_status_counts

# --- read from the database at scrape time ---------------------------------------------------------

# Each a range of the (status, next_attempt_at) index: the waiting rows only, however many have settled.
_OLDEST = sa.text("SELECT MIN(created_at) FROM email_outbox WHERE status = :status")
# The reconciliation's figures over this many local days, today included.
RECONCILED_DAYS = 7
# Emails accepted, and emails a receipt moved, in the last RECENT_HOURS, by family: when receipts
# stop coming while sending goes on, the second stays at 0 while the first grows. Among the rows
# committed in the last day (a range of the created_at index), not the whole table.
RECENT_HOURS = 2
_RECENT = sa.text(
    """
    SELECT family, SUM(sent_at >= :since) AS accepted, SUM(last_event_at >= :since) AS receipted
    FROM email_outbox WHERE created_at >= :committed_since GROUP BY family
    """
)


class OutboxCollector(Collector):
    """Rows by family and status, and the age of the oldest `pending` and `retry` row, read when
    /metrics is scraped. Every family × status pair is reported (zeros included), so an alert on
    `portal_outbox_rows{status="dead_letter"} > 0` sees a series from the start."""

    def __init__(self, db, families: list[str], *, zone: tzinfo = UTC, no_receipt_hours: int = 48):
        self.db = db
        self.families = sorted(families)
        self.zone, self.no_receipt_hours = zone, no_receipt_hours

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self.db.read() as conn:
            counts = family_status_counts(conn)
            oldest = {status: conn.execute(_OLDEST, {"status": status}).scalar() for status in (PENDING, RETRY)}
        rows = GaugeMetricFamily("portal_outbox_rows", "Outbox rows by family and status", labels=["family", "status"])
        for family in sorted(set(self.families) | {family for family, _ in counts}):
            for status in ALL:
                rows.add_metric([family, status], counts.get((family, status), 0))
        yield rows
        ages = GaugeMetricFamily(
            "portal_outbox_oldest_age_seconds",
            "Age (since commit) of the oldest row in a waiting status; 0 when there is none",
            labels=["status"],
        )
        now = clock.utcnow()
        for status, created_at in oldest.items():
            age = (now - clock.parse(created_at)).total_seconds() if created_at else 0.0
            ages.add_metric([status], max(age, 0.0))
        yield ages
        yield from self._delivery(now)

    def _delivery(self, now) -> Iterator[GaugeMetricFamily]:
        today = now.astimezone(self.zone).date()
        days = [today - timedelta(days=n) for n in range(RECONCILED_DAYS - 1, -1, -1)]
        found = reconcile(self.db, days=days, zone=self.zone, no_receipt_hours=self.no_receipt_hours, now=now)
        with self.db.read() as conn:
            recent = {
                row.family: row
                for row in conn.execute(
                    _RECENT,
                    {
                        "since": clock.iso(now - timedelta(hours=RECENT_HOURS)),
                        "committed_since": clock.iso(now - timedelta(days=1)),
                    },
                )
            }
        families = sorted(set(self.families) | set(found.by_family))
        reconciled = GaugeMetricFamily(
            "portal_outbox_reconciled",
            f"Emails committed in the last {RECONCILED_DAYS} days (the portal's days, today included), by family "
            "and what became of them: the delivery reconciliation's figures",
            labels=["family", "figure"],
        )
        for family in families:
            rows = found.by_family.get(family)
            total = found.total(rows) if rows else dict.fromkeys(FIGURES, 0)
            for figure in FIGURES:
                reconciled.add_metric([family, figure], total[figure])
        yield reconciled
        for name, what in (("accepted", "accepted by the provider"), ("receipted", "moved by a provider receipt")):
            gauge = GaugeMetricFamily(
                f"portal_outbox_{name}_last_{RECENT_HOURS}h",
                f"Emails {what} in the last {RECENT_HOURS} hours, by family",
                labels=["family"],
            )
            for family in families:
                row = recent.get(family)
                gauge.add_metric([family], int(getattr(row, name) or 0) if row else 0)
            yield gauge
