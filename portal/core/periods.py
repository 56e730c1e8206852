"""Periods: local calendar dates in the portal's time zone (PORTAL_TIMEZONE), turned into UTC bounds.

The one module for every period the portal names: the report's presets and closable years, the
report emails' months and quarters with the moment each closes, and the keys (2026-11, 2026-Q3)
that name them on the command line and in the outbox.

A period is a run of whole local days, `start` to `end` inclusive. Its UTC bounds are the instant
local midnight begins `start` and the instant local midnight ends `end`, so a session at 23:30 on
the last evening of a month belongs to that month wherever UTC puts it. A month or quarter closes
at local midnight after its last day, so the October report is due from 00:00 on 1 November in
Oslo, whatever the UTC offset is on either side of a daylight-saving change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from portal.core.clock import iso

MONTHLY, QUARTERLY = "monthly", "quarterly"
_KEY = re.compile(r"^(\d{4})-(?:(0[1-9]|1[0-2])|Q([1-4]))$")
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def report_timezone(settings) -> ZoneInfo:
    """The portal's time zone (PORTAL_TIMEZONE), where every period begins and ends."""
    return ZoneInfo(settings.portal_timezone)


def today_in(tz: ZoneInfo) -> date:
    """Today's local date; read once where a request starts, and passed on from there."""
    return datetime.now(tz).date()


@dataclass(frozen=True)
class Period:
    start: date
    end: date  # inclusive
    label: str
    kind: str = "custom"

    def utc_bounds(self, tz: ZoneInfo) -> tuple[str, str]:
        """[start, end) as fixed-width UTC text, comparable with attendance_sessions.held_at."""
        return local_midnight(self.start, tz), local_midnight(self.end + timedelta(days=1), tz)

    def months(self) -> list[Period]:
        """The calendar months the period touches, each clipped to the period."""
        months, first = [], self.start.replace(day=1)
        while first <= self.end:
            last = add_months(first, 1) - timedelta(days=1)
            months.append(
                Period(
                    max(first, self.start),
                    min(last, self.end),
                    f"{MONTH_NAMES[first.month - 1][:3]} {first.year}",
                    "month",
                )
            )
            first = add_months(first, 1)
        return months

    @property
    def query(self) -> dict:
        return {"from": self.start.isoformat(), "to": self.end.isoformat()}

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


def local_midnight(day: date, tz: ZoneInfo) -> str:
    return iso(datetime.combine(day, time(0), tzinfo=tz))


def add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return day.replace(year=index // 12, month=index % 12 + 1, day=1)


def fiscal_year(year_start: date, start_month: int) -> Period:
    """The fiscal year beginning on the first of start_month in year_start's year."""
    first = date(year_start.year, start_month, 1)
    end = add_months(first, 12) - timedelta(days=1)
    label = str(first.year) if start_month == 1 else f"FY {first.year}/{str(end.year)[2:]}"
    return Period(first, end, label, "fiscal_year" if start_month != 1 else "year")


def fiscal_year_containing(day: date, start_month: int) -> Period:
    year = day.year if day.month >= start_month else day.year - 1
    return fiscal_year(date(year, 1, 1), start_month)


def presets(today: date, fiscal_start_month: int = 1) -> list[Period]:
    """The periods offered as one click, newest first; `today` is a local date."""
    this_month = today.replace(day=1)
    quarter_first = today.replace(month=(today.month - 1) // 3 * 3 + 1, day=1)
    last_quarter_first = add_months(quarter_first, -3)
    found = [
        Period(this_month, today, "This month", "this_month"),
        Period(add_months(this_month, -1), this_month - timedelta(days=1), "Last month", "last_month"),
        Period(quarter_first, today, "This quarter", "this_quarter"),
        Period(last_quarter_first, quarter_first - timedelta(days=1), "Last quarter", "last_quarter"),
        Period(date(today.year, 1, 1), today, "Year to date", "year_to_date"),
        Period(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31), "Last year", "last_year"),
    ]
    if fiscal_start_month != 1:
        current = fiscal_year_containing(today, fiscal_start_month)
        previous = fiscal_year_containing(current.start - timedelta(days=1), fiscal_start_month)
        found.append(Period(current.start, today, f"{current.label} to date", "fiscal_year_to_date"))
        found.append(Period(previous.start, previous.end, previous.label, "last_fiscal_year"))
    return found


def label_for(start: date, end: date, today: date, fiscal_start_month: int) -> str:
    """A period as the report names it: a preset's name when it is one, then its dates."""
    for preset in presets(today, fiscal_start_month):
        if (preset.start, preset.end) == (start, end):
            return f"{preset.label}: {describe(start, end)}"
    return describe(start, end)


def closable_years(today: date, fiscal_start_month: int, back: int = 3) -> list[Period]:
    """Years (calendar, and fiscal when the company sets one) that have ended, newest first."""
    years = []
    for start_month in sorted({1, fiscal_start_month}):
        current = fiscal_year_containing(today, start_month)
        for _ in range(back):
            current = fiscal_year_containing(current.start - timedelta(days=1), start_month)
            years.append(current)
    return sorted(years, key=lambda p: p.start, reverse=True)


def describe(start: date, end: date) -> str:
    return f"{start:%-d %b %Y} – {end:%-d %b %Y}"


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
