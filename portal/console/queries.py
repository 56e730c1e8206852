"""What the console shows: the grid of counts, a page of the filtered list, one email's history.

Every read goes through the engine's operator face (portal/outbox/operator.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from zoneinfo import ZoneInfo

from portal.core.periods import local_midnight
from portal.outbox import operator
from portal.outbox.operator import eligible_actions, is_unknown_outcome
from portal.outbox.statuses import ALL


@dataclass(frozen=True)
class CountGrid:
    families: list[str]
    statuses: list[str]  # the statuses any family has rows in, in the engine's order
    counts: dict[str, dict[str, int]]

    def total(self, status: str) -> int:
        return sum(by_status.get(status, 0) for by_status in self.counts.values())


def count_grid(db) -> CountGrid:
    counts = operator.family_status_counts(db)
    present = {status for by_status in counts.values() for status in by_status}
    return CountGrid(families=sorted(counts), statuses=[s for s in ALL if s in present], counts=counts)


def outbox_filter(
    *,
    zone: ZoneInfo,
    status: str = "",
    family: str = "",
    q: str = "",
    created_from: date | None = None,
    created_to: date | None = None,
) -> operator.OutboxFilter:
    """The list's filters as the engine takes them: dates are whole days in the portal's zone, as the
    list shows its times, `to` inclusive."""
    return operator.OutboxFilter(
        status=status if status in ALL else "",
        family=family or "",
        recipient=(q or "").strip().lower(),
        created_from=local_midnight(created_from, zone) if created_from else "",
        created_before=local_midnight(created_to + timedelta(days=1), zone) if created_to else "",
    )


def outbox_page(db, filters: operator.OutboxFilter, cursor: str | None) -> operator.OutboxPage:
    return operator.outbox_page(db, filters, cursor)


@dataclass(frozen=True)
class EmailDetail:
    row: dict
    timeline: list[operator.TimelineEntry]
    actions: list[str]  # what the row allows now
    unknown_outcome: bool


def email_detail(db, outbox_id: str) -> EmailDetail | None:
    row = operator.outbox_row(db, outbox_id)
    if row is None:
        return None
    return EmailDetail(
        row=row,
        timeline=operator.timeline(db, row),
        actions=eligible_actions(row),
        unknown_outcome=is_unknown_outcome(row),
    )
