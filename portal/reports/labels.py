"""Periods, months and moments as the report names them, in the reader's language.

portal/core/periods.py names every period in English when it makes it ("Last month: 1 Oct 2026 –
31 Oct 2026", "FY 2025/26", "Q3 2026", "October 2026"), and those names are stored (closed years,
report emails' input). The report shows them through here: English as stored, word for word;
Norwegian rebuilt from the period's kind and dates, so a stored name never decides the language.
No Flask: the PDF, the exports and the report emails use this too.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from zoneinfo import ZoneInfo

from babel import dates

from portal.core.clock import parse
from portal.core.i18n import ENGLISH, N_, day, language_or_default, month, translate
from portal.core.periods import MONTH_NAMES, Period, describe

# The one-click periods' names (portal/core/periods.py, `presets`), as their English labels.
PRESET_NAMES = {
    "This month": N_("This month"),
    "Last month": N_("Last month"),
    "This quarter": N_("This quarter"),
    "Last quarter": N_("Last quarter"),
    "Year to date": N_("Year to date"),
    "Last year": N_("Last year"),
}
FISCAL_YEAR = N_("FY %(years)s")
TO_DATE = N_("%(name)s to date")
QUARTER = N_("Q%(quarter)s %(year)s")
NAMED_SPAN = N_("%(name)s: %(dates)s")

_FISCAL = re.compile(r"^FY (\d{4}/\d{2})$")
_FISCAL_TO_DATE = re.compile(r"^(FY \d{4}/\d{2}) to date$")
_QUARTER = re.compile(r"^Q([1-4]) (\d{4})$")
_MONTH = re.compile(r"^([A-Z][a-z]+) (\d{4})$")


def _english(language: str) -> bool:
    return language_or_default(language) == ENGLISH


def full_month(first: date, language: str) -> str:
    """October 2026 / oktober 2026."""
    return dates.format_date(first, format="MMMM y", locale=language_or_default(language))


def name_label(label: str, language: str) -> str:
    """A period's stored name (a preset, a fiscal year, a quarter, a month, a year) in `language`."""
    if _english(language):
        return label
    if label in PRESET_NAMES:
        return translate(language, PRESET_NAMES[label])
    if found := _FISCAL_TO_DATE.match(label):
        return translate(language, TO_DATE, name=name_label(found[1], language))
    if found := _FISCAL.match(label):
        return translate(language, FISCAL_YEAR, years=found[1])
    if found := _QUARTER.match(label):
        return translate(language, QUARTER, quarter=found[1], year=found[2])
    if found := _MONTH.match(label):
        names = [name[:3] for name in MONTH_NAMES]
        if found[1] in MONTH_NAMES:
            return full_month(date(int(found[2]), MONTH_NAMES.index(found[1]) + 1, 1), language)
        if found[1] in names:
            return month(date(int(found[2]), names.index(found[1]) + 1, 1), language)
    return label  # a calendar year ("2025") is written the same in both


def describe_in(start: date, end: date, language: str) -> str:
    """1 Oct 2026 – 31 Oct 2026 / 1. okt. 2026 – 31. okt. 2026."""
    if _english(language):
        return describe(start, end)
    return f"{day(start, language)} – {day(end, language)}"


def period_label(period: Period, language: str) -> str:
    """The period's name as the report shows it in `language` (English: exactly as stored)."""
    if _english(language):
        return period.label
    if period.kind == "custom":
        name, named, _dates = period.label.partition(": ")
        spans = describe_in(period.start, period.end, language)
        if named:
            return translate(language, NAMED_SPAN, name=name_label(name, language), dates=spans)
        return spans
    if period.kind == "month" and period.label.split(" ")[0] in MONTH_NAMES:
        return full_month(period.start.replace(day=1), language)
    if period.kind == "month":
        return month(period.start, language)
    return name_label(period.label, language)


def month_row_label(row, language: str) -> str:
    """A month row of the figures (MonthRow: its stored label and its first day), in `language`."""
    if _english(language):
        return row.label
    return month(date.fromisoformat(row.start), language)


def moment_text(stored: str, tz: ZoneInfo, language: str) -> str:
    """A stored UTC time as the report's "as of": 3 Oct 2026 16:05 CEST / 3. okt. 2026 16:05 CEST."""
    local = parse(stored).astimezone(tz)
    if _english(language):
        return local.strftime("%-d %b %Y %H:%M %Z")
    return f"{day(local.date(), language)} {local:%H:%M %Z}"


def closes_text(moment: datetime, language: str) -> str:
    """When a period's email goes out, local: 1 December 2026, 00:00 / 1. desember 2026 kl. 00:00."""
    if _english(language):
        return moment.strftime("%-d %B %Y, %H:%M")
    pattern = "d. MMMM y 'kl.' HH:mm"
    return dates.format_datetime(moment, format=pattern, tzinfo=moment.tzinfo, locale=language_or_default(language))


def month_names(language: str) -> list[str]:
    """January..December as a list to choose from, in `language` (Norwegian: "Januar", capitalised
    as the first word of a choice)."""
    if _english(language):
        return list(MONTH_NAMES)
    names = dates.get_month_names("wide", locale=language_or_default(language))
    return [names[n][:1].upper() + names[n][1:] for n in range(1, 13)]
