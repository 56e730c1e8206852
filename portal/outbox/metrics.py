"""The email engine's metrics: what it counts as it works, and what it reads from the database.

Counters and histograms are recorded where things happen (one-line calls in attempt.py and its ways,
rate_limit.py, relay.py and receipts.py). With PROMETHEUS_MULTIPROC_DIR set before a process
imports prometheus_client, each process writes them to its own files in that directory, and
/metrics adds up every gunicorn worker and every RQ worker on the machine
(`prometheus_client.multiprocess`). Without it, /metrics shows the one process it runs in.

What the rows are (by family and status, the oldest waiting) is not counted at all: it is read
from the database at scrape time by `OutboxCollector`, so every process and every machine agrees
and a restart loses nothing.

Labels only ever take values from closed sets (families, statuses, answer kinds, receipt types),
never an address or an ID: a label value becomes a time series of its own.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterator
from datetime import UTC, timedelta, tzinfo

import sqlalchemy as sa
from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from portal.core import clock
from portal.outbox.reads import family_status_counts
from portal.outbox.reconciliation import FIGURES, reconcile
from portal.outbox.statuses import ALL, PENDING, RETRY

log = logging.getLogger(__name__)

PROVIDER_ANSWERS = Counter(
    "portal_provider_answers",
    "Provider answers to send requests, by family and how the engine classified them",
    ["family", "kind"],
)
PROVIDER_RATE_LIMITED = Counter(
    "portal_provider_rate_limited", "Provider answers that were 429 (rate limited)", ["family"]
)
RATE_LIMIT_WAIT = Histogram(
    "portal_rate_limit_wait_seconds",
    "Time a delivery waited for a slot of the shared provider rate limit",
    ["result"],
    buckets=(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300),
)
ACCEPT_LATENCY = Histogram(
    "portal_email_accept_latency_seconds",
    "From the commit of an email's outbox row to the provider's acceptance",
    ["family"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600),
)
RECEIPTS = Counter(
    "portal_receipts", "Provider receipts processed (duplicates not counted), by type and outcome", ["type", "outcome"]
)
RELAY_PUBLISHED = Counter(
    "portal_relay_published_rows", "Outbox rows the relay (re)published because their message may be lost", ["queued"]
)

RECEIPT_TYPES = frozenset(
    {
        "email.sent",
        "email.delivered",
        "email.delivery_delayed",
        "email.bounced",
        "email.complained",
        "email.failed",
        "email.suppressed",
        "email.opened",
        "email.clicked",
    }
)


def _never_raises(record):
    """A metric that cannot be written (a full disk under PROMETHEUS_MULTIPROC_DIR, a malformed
    time) is logged and skipped: the hooks sit between a provider's answer and its recording."""

    @functools.wraps(record)
    def guarded(*args, **kwargs) -> None:
        try:
            record(*args, **kwargs)
        except Exception as error:
            log.warning("metric %s not recorded: %s", record.__name__, type(error).__name__)

    return guarded


@_never_raises
def provider_answered(family: str, answer) -> None:
    """One provider answer (portal.outbox.provider.ProviderAnswer)."""
    PROVIDER_ANSWERS.labels(family, answer.kind).inc()
    if answer.status == 429:
        PROVIDER_RATE_LIMITED.labels(family).inc()


@_never_raises
def email_accepted(family: str, created_at: str | None) -> None:
    """The provider accepted the email of a row committed at `created_at` (an ISO time)."""
    if created_at:
        ACCEPT_LATENCY.labels(family).observe(max((clock.utcnow() - clock.parse(created_at)).total_seconds(), 0.0))


@_never_raises
def receipt_processed(event_type: str, outcome: str) -> None:
    RECEIPTS.labels(event_type if event_type in RECEIPT_TYPES else "other", outcome).inc()


@_never_raises
def relay_published(rows: int, queued: bool) -> None:
    if rows:
        RELAY_PUBLISHED.labels("yes" if queued else "no").inc(rows)


def times_rate_limit_wait(take_slot):
    """Decorator for ProviderRateLimit.take_slot: how long each wait for a slot took, and how it ended."""

    @functools.wraps(take_slot)
    def timed(*args, **kwargs):
        started = time.monotonic()
        taken = False
        try:
            taken, found = take_slot(*args, **kwargs)
            return taken, found
        finally:
            _observe_wait("acquired" if taken else "gave_up", time.monotonic() - started)

    return timed


@_never_raises
def _observe_wait(result: str, seconds: float) -> None:
    RATE_LIMIT_WAIT.labels(result).observe(seconds)


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
