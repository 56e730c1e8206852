"""The email engine's metrics: what it counts as it works (gauges.py reads the rest from the database).

Counters and histograms are recorded where things happen (one-line calls in attempt.py and its ways,
rate_limit.py, relay.py and receipts.py). With PROMETHEUS_MULTIPROC_DIR set before a process
imports prometheus_client, each process writes them to its own files in that directory, and
/metrics adds up every gunicorn worker and every RQ worker on the machine
(`prometheus_client.multiprocess`). Without it, /metrics shows the one process it runs in.

What the rows are (by family and status, the oldest waiting) is not counted at all: it is read
from the database at scrape time (gauges.OutboxCollector), so every process and every machine
agrees and a restart loses nothing.

Labels only ever take values from closed sets (families, statuses, answer kinds, receipt types),
never an address or an ID: a label value becomes a time series of its own.
"""

from __future__ import annotations

import functools
import logging
import time

from prometheus_client import Counter, Histogram

from portal.core import clock

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
        "suppression.added",
        "suppression.removed",
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
    """One provider answer (portal.outbox.ground.provider.ProviderAnswer)."""
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
