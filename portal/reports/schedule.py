"""The report emails' calendar: monthly and quarterly periods in PORTAL_TIMEZONE, when each closes,
and which have closed since a moment (the catch-up after downtime).

A period closes at local midnight after its last day, so the October report is due from 00:00 on
1 November in Oslo, whatever the UTC offset is on either side of a daylight-saving change.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from portal.core.periods import MONTH_NAMES, Period, add_months

MONTHLY, QUARTERLY, OFF = "monthly", "quarterly", "off"
FREQUENCIES = {MONTHLY: "Every month", QUARTERLY: "Every quarter", OFF: "Off"}
_KEY = re.compile(r"^(\d{4})-(?:(0[1-9]|1[0-2])|Q([1-4]))$")


class PeriodKeyError(ValueError):
    """A period written wrongly; the message is safe to show."""


def month_period(first: date) -> Period:
    first = first.replace(day=1)
    return Period(
        first, add_months(first, 1) - timedelta(days=1), f"{MONTH_NAMES[first.month - 1]} {first.year}", "month"
    )


def quarter_period(first: date) -> Period:
    first = first.replace(month=(first.month - 1) // 3 * 3 + 1, day=1)
    quarter = (first.month - 1) // 3 + 1
    return Period(first, add_months(first, 3) - timedelta(days=1), f"Q{quarter} {first.year}", "quarter")


def period_for(day: date, frequency: str) -> Period:
    """The month or quarter containing a local date."""
    if frequency == MONTHLY:
        return month_period(day)
    if frequency == QUARTERLY:
        return quarter_period(day)
    raise ValueError(f"no periods for frequency {frequency!r}")


def period_key(period: Period) -> str:
    if period.kind == "quarter":
        return f"{period.start.year}-Q{(period.start.month - 1) // 3 + 1}"
    return f"{period.start:%Y-%m}"


def frequency_of(period: Period) -> str:
    return QUARTERLY if period.kind == "quarter" else MONTHLY


def parse_period_key(raw: str) -> Period:
    """2026-11 (a month) or 2026-Q3 (a quarter)."""
    match = _KEY.match((raw or "").strip().upper())
    if not match:
        raise PeriodKeyError(f"a period is written 2026-11 (a month) or 2026-Q3 (a quarter), not {raw[:20]!r}")
    year, month, quarter = int(match.group(1)), match.group(2), match.group(3)
    if month:
        return month_period(date(year, int(month), 1))
    return quarter_period(date(year, (int(quarter) - 1) * 3 + 1, 1))


def closes_at(period: Period, tz: ZoneInfo) -> datetime:
    """The instant (UTC) the period closes: local midnight after its last day."""
    return datetime.combine(period.end + timedelta(days=1), time(0), tzinfo=tz).astimezone(UTC)


def last_closed(frequency: str, now: datetime, tz: ZoneInfo) -> Period:
    """The newest period of this frequency that has closed at `now`."""
    today = now.astimezone(tz).date()
    return period_for(period_for(today, frequency).start - timedelta(days=1), frequency)


def closed_between(frequency: str, since: datetime, now: datetime, tz: ZoneInfo) -> list[Period]:
    """Periods that closed after `since` and by `now`, oldest first: every one a pass has to send."""
    periods = []
    period = last_closed(frequency, now, tz)
    while closes_at(period, tz) > since:
        periods.append(period)
        period = period_for(period.start - timedelta(days=1), frequency)
    return periods[::-1]
