"""Delivery reconciliation: what became of the emails committed each day, family by family.

Every email committed to the outbox on a day (in the portal's time zone) is counted once, by what
it is now, so the columns from `delivered` on add up to `committed`:

- delivered, bounced (of them `bounced_transient`, where the receipt's kept fields say so),
  complained: the provider's last word on an accepted email;
- accepted, but no delivery receipt yet: `delayed` (the provider said delivery is delayed),
  `awaiting_receipt` (accepted less than `no_receipt_hours` ago), `no_receipt` (longer: someone
  should find out why);
- never accepted, or no longer sendable: suppressed, failed, `unknown_outcome` (a person must
  decide whether it went), `stopped` (cancelled, or a dead letter for another reason);
- `in_flight`: still waiting or being sent.

`accepted` (a provider message ID is recorded) overlaps the others: it is the article's "recorded
as sent". Days are read as half-open UTC intervals of local midnights, in one statement.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database
from portal.core.i18n import N_
from portal.core.periods import local_midnight
from portal.outbox.ground.statuses import (
    BOUNCED,
    CANCELLED,
    COMPLAINED,
    DEAD_LETTER,
    DELIVERED,
    FAILED,
    OUTCOME_UNKNOWN,
    SENT,
    SUPPRESSED,
    UNSETTLED,
    sql_list,
)

# The figures of a day, in the order the page, the CSV and the command show them.
FIGURES = (
    "committed",
    "accepted",
    "delivered",
    "delayed",
    "bounced",
    "bounced_transient",
    "complained",
    "awaiting_receipt",
    "no_receipt",
    "suppressed",
    "failed",
    "unknown_outcome",
    "stopped",
    "in_flight",
)
# The figures that together count each committed email once: all but the two totals and the
# share of the bounces that were transient.
PARTITION = tuple(f for f in FIGURES if f not in ("committed", "accepted", "bounced_transient"))
LABELS = {
    "committed": N_("Committed"),
    "accepted": N_("Accepted"),
    "delivered": N_("Delivered"),
    "delayed": N_("Delayed"),
    "bounced": N_("Bounced"),
    "bounced_transient": N_("of them transient"),
    "complained": N_("Complained"),
    "awaiting_receipt": N_("Awaiting receipt"),
    "no_receipt": N_("No receipt"),
    "suppressed": N_("Suppressed"),
    "failed": N_("Failed"),
    "unknown_outcome": N_("Unknown outcome"),
    "stopped": N_("Cancelled or dead letter"),
    "in_flight": N_("Still sending"),
}

# Accepted (row `o`) with no delivery receipt yet: its status has not moved on, and the provider has
# not said delivery is delayed. Past :no_receipt_before, `NO_RECEIPT`: the figure a person looks
# at, and the emails receipt_lookup.py asks about.
NO_DELIVERY_RECEIPT = f"""o.status = '{SENT}' AND NOT EXISTS (
    SELECT 1 FROM email_receipts r WHERE r.provider_message_id = o.provider_message_id AND r.type = 'email.delivery_delayed')"""
NO_RECEIPT = f"{NO_DELIVERY_RECEIPT} AND o.sent_at <= :no_receipt_before"
_UNKNOWN = OUTCOME_UNKNOWN  # the columns unqualified: only email_outbox has them here
_DAYS = sa.text(
    f"""
    SELECT day.key AS day_index, o.family,
        COUNT(*) AS committed,
        COUNT(o.provider_message_id) AS accepted,
        SUM(o.status = '{DELIVERED}') AS delivered,
        SUM(o.status = '{SENT}' AND NOT ({NO_DELIVERY_RECEIPT})) AS delayed,
        SUM(o.status = '{BOUNCED}') AS bounced,
        SUM(o.status = '{BOUNCED}' AND EXISTS (
            SELECT 1 FROM email_receipts r WHERE r.provider_message_id = o.provider_message_id AND r.type = 'email.bounced'
              AND lower(r.payload ->> '$.bounce_type') = 'transient')) AS bounced_transient,
        SUM(o.status = '{COMPLAINED}') AS complained,
        SUM({NO_DELIVERY_RECEIPT} AND o.sent_at > :no_receipt_before) AS awaiting_receipt,
        SUM({NO_RECEIPT}) AS no_receipt,
        SUM(o.status = '{SUPPRESSED}') AS suppressed,
        SUM(o.status = '{FAILED}') AS failed,
        SUM({_UNKNOWN}) AS unknown_outcome,
        SUM(o.status = '{CANCELLED}' OR (o.status = '{DEAD_LETTER}' AND NOT ({_UNKNOWN}))) AS stopped,
        SUM(o.status IN {sql_list(UNSETTLED)}) AS in_flight
    FROM json_each(:days) AS day
    JOIN email_outbox o ON o.created_at >= day.value ->> '$[0]' AND o.created_at < day.value ->> '$[1]'
    GROUP BY day.key, o.family
    """
)


@dataclass(frozen=True)
class DayFigures:
    day: date
    family: str  # "" for every family together
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIGURES, 0))

    def __getitem__(self, figure: str) -> int:
        return self.counts[figure]

    @property
    def accounted(self) -> bool:
        """Each committed email is in exactly one of the partition's figures."""
        return sum(self.counts[f] for f in PARTITION) == self.counts["committed"]

    @property
    def unexplained(self) -> int:
        """Accepted or maybe sent, with nothing from the provider to say what became of it."""
        return self.counts["no_receipt"] + self.counts["unknown_outcome"]


@dataclass(frozen=True)
class Reconciliation:
    days: list[date]
    by_family: dict[str, list[DayFigures]]  # each family's figures, one per day, oldest first
    totals: list[DayFigures]  # every family together, one per day

    @property
    def families(self) -> list[str]:
        return sorted(self.by_family)

    def rows_of(self, family: str = "") -> list[DayFigures]:
        """One family's days (zeros for a family that wrote nothing), or every family's ("")."""
        if not family:
            return self.totals
        return self.by_family.get(family) or [DayFigures(day, family) for day in self.days]

    def total(self, rows: list[DayFigures]) -> dict[str, int]:
        return {figure: sum(row[figure] for row in rows) for figure in FIGURES}


def reconcile(
    db: Database, *, days: list[date], zone: ZoneInfo, no_receipt_hours: int, now: datetime
) -> Reconciliation:
    """The figures of `days` (local days in `zone`). An email accepted more than `no_receipt_hours`
    before `now` with no delivery receipt counts as `no_receipt`; a day with no email is zeros."""
    bounds = json.dumps([[local_midnight(day, zone), local_midnight(day + timedelta(days=1), zone)] for day in days])
    params = {"days": bounds, "no_receipt_before": clock.iso(now - timedelta(hours=no_receipt_hours))}
    with db.read() as conn:
        rows = conn.execute(_DAYS, params).mappings().all()
    by_family: dict[str, list[DayFigures]] = {}
    for row in rows:
        figures = by_family.setdefault(row["family"], [DayFigures(day, row["family"]) for day in days])
        figures[row["day_index"]].counts.update({name: int(row[name] or 0) for name in FIGURES})
    totals = [DayFigures(day, "") for day in days]
    for figures in by_family.values():
        for index, day_figures in enumerate(figures):
            for name in FIGURES:
                totals[index].counts[name] += day_figures[name]
    return Reconciliation(days=days, by_family=by_family, totals=totals)


# Accepted, still without a final status (no receipt, or only "delivery delayed"), longer ago than
# the provider keeps an email's record (PROVIDER_LOG_RETENTION_DAYS): a lookup can learn nothing
# more of them; what the lookups asked before is in email_lookups. Through (status, created_at, id).
_PAST_PROVIDER_MEMORY = sa.text(
    f"SELECT COUNT(*) FROM email_outbox o WHERE o.status = '{SENT}' AND o.sent_at <= :forgotten_before"
)


def past_provider_memory(db: Database, *, retention_days: int, now: datetime) -> int:
    """How many accepted emails passed the provider's memory at `now` without a final status."""
    params = {"forgotten_before": clock.iso(now - timedelta(days=retention_days))}
    with db.read() as conn:
        return int(conn.execute(_PAST_PROVIDER_MEMORY, params).scalar_one())
