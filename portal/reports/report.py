"""One report as the page, the exports and the PDF all show it: figures, closure, method, money.

A period that a manager closed reads its frozen snapshot; the live figures are read beside it only
to show what changed since the close.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core.clock import now_iso
from portal.core.db import Database
from portal.core.i18n import ENGLISH, percent
from portal.core.periods import Period
from portal.core.programmes import PROGRAMMES
from portal.reports.figures import DENOMINATOR_TEXT, Cell, Figures, read_figures
from portal.reports.filing import (
    Filed,
    FiledCorrections,
    FilingMask,
    filed_period,
    filing_as_it_stands,
    filing_of,
    find_filing,
)
from portal.reports.goals import Comparison, YearBefore, goal_year, read_goal, year_before
from portal.reports.hours import HUNDREDTH, hours_change
from portal.reports.labels import moment_text
from portal.reports.queries import (
    Closure,
    CompanyStart,
    ReportSettings,
    read_closure_for,
    read_company_start,
    read_corrections_since,
    read_report_settings,
)
from portal.reports.selection import ReportQuery


@dataclass(frozen=True)
class Changes:
    """Live figures minus the filed ones, for a closed period."""

    records: int
    hours: float
    sessions: int
    volunteers: int
    people: int = 0  # colleagues the late records are about: the size of the group they describe

    @property
    def any(self) -> bool:
        return bool(self.records or self.hours or self.sessions or self.volunteers)


@dataclass
class Report:
    company_id: int
    company_name: str
    query: ReportQuery
    tz: ZoneInfo
    figures: Figures
    as_of: str
    report_id: str
    settings: ReportSettings
    closure: Closure | None = None
    live: Figures | None = None
    changes: Changes | None = None
    mask: FilingMask | None = None  # set on a filing output: what its PDF and email hide
    corrections: FiledCorrections | None = None  # a filing output's: late records for months filed before
    comparison: Comparison | None = None  # its year's goal and the year before (goals.py)

    @property
    def programme_labels(self) -> dict[str, str]:
        return {p: PROGRAMMES[p] for p in self.query.programmes}

    @property
    def denominator_text(self) -> str:
        return DENOMINATOR_TEXT

    @property
    def as_of_local(self) -> str:
        return self.as_of_in(ENGLISH)

    def as_of_in(self, language: str) -> str:
        """When the figures were read (or filed), local, in `language`: 3 Oct 2026 16:05 CEST."""
        return moment_text(self.as_of, self.tz, language)

    @property
    def company_time_hours(self) -> Decimal:
        # From the total as printed, so no money or share figure carries more than the page shows.
        share = self.figures.total.hours * self.settings.company_time_percent / 100
        return share.quantize(HUNDREDTH, rounding=ROUND_HALF_UP)

    @property
    def own_time_hours(self) -> Decimal:
        # The rest of the shown total, so the two parts always add up to it.
        return self.figures.total.hours - self.company_time_hours

    @property
    def b4si_time_value(self) -> Decimal | None:
        if self.settings.hourly_cost is None:
            return None
        return (self.company_time_hours * Decimal(self.settings.hourly_cost)).quantize(Decimal("1"))

    def cell_participation(self, cell: Cell, language: str = ENGLISH) -> str:
        rate = self.figures.participation_of(cell)
        return "–" if rate is None else percent(rate, language, 1)


def live_report_id(company_id: int, query: ReportQuery, as_of: str) -> str:
    digest = hashlib.sha256(
        f"{company_id}|{query.period.start}|{query.period.end}|{query.programme}|{as_of}".encode()
    ).hexdigest()
    return f"TEEI-{company_id}-{query.period.start:%Y%m%d}-{query.period.end:%Y%m%d}-L{digest[:7].upper()}"


def filing_for(db: Database, *, company_id: int, period: Period) -> Filed | None:
    """The period's filing, if it was filed: the page states its ID beside the live figures."""
    with db.read() as conn:
        return filing_of(conn, company_id=company_id, period=period)


def filed_report_by_id(db: Database, *, report_id: str, tz: ZoneInfo) -> Report | None:
    """The filing with this report ID as every copy of it states it (the figures, the mask and the
    "as of" of its PDF), or None. For the public verify page: nothing here names a person."""
    with db.read() as conn:
        found = find_filing(conn, report_id)
        if found is None:
            return None
        period = filed_period(found.period_start, found.period_end)
        closure = read_closure_for(conn, company_id=found.company_id, period=period)
    filed = found.filed
    return Report(
        found.company_id,
        found.company_name,
        ReportQuery(period, "all"),
        tz,
        filed.figures,
        closure.closed_at if closure else filed.filed_at,
        filed.report_id,
        ReportSettings(**closure.snapshot["settings"]) if closure else ReportSettings(),
        closure=closure,
        mask=filed.mask,
        corrections=filed.corrections,
        comparison=filed.comparison,
    )


def live_comparison(
    conn: sa.Connection,
    *,
    company_id: int,
    query: ReportQuery,
    figures: Figures,
    settings: ReportSettings,
    tz: ZoneInfo,
) -> Comparison:
    """The page's comparison (the company's working copy, nothing hidden): the goal of the year the
    period begins (all programmes only: a goal is the company's), and the same period last year, live."""
    earlier = year_before(query.period)
    live = read_figures(conn, company_id=company_id, query=ReportQuery(earlier, query.programme), tz=tz, listed=False)
    before = YearBefore.of(earlier, live)
    year = goal_year(query.period, settings.fiscal_year_start_month)
    if year is None or query.programme != "all":
        return Comparison(before=before)
    goal = read_goal(conn, company_id=company_id, year=year)
    return Comparison(
        goal,
        figures.total.minutes,
        False,
        query.period.end.isoformat(),
        query.period.end < year.end,
        True,
        before,
    )


def build_report(
    db: Database, *, company_id: int, company_name: str, query: ReportQuery, tz: ZoneInfo, facts: bool = False
) -> Report:
    """`facts`: read what a filing's mask needs too (read_figures)."""
    with db.read() as conn:
        return read_report(conn, company_id=company_id, company_name=company_name, query=query, tz=tz, facts=facts)


class ReportPage(NamedTuple):
    settings: ReportSettings
    query: object  # what `choose_query` gave: a ReportQuery, or the errors that stop one
    report: Report | None  # None when the query had errors
    start: CompanyStart


def read_report_page(
    db: Database,
    *,
    company_id: int,
    company_name: str,
    tz: ZoneInfo,
    choose_query: Callable[[ReportSettings], object],
    as_filed: bool = False,
) -> ReportPage:
    """What the report page shows, read in one transaction: on a libSQL server each statement is a
    request and each transaction one more, and the page once read in six. `choose_query` makes the
    query from the company's settings (its fiscal year), or the errors that stop it.

    `as_filed` (TEEI's read-only view): the figures and mask of the period's filing, or of the filing
    it would get now (filing.filing_as_it_stands; nothing is written), so the page hides what the
    company's filing hides."""
    with db.read() as conn:
        settings = read_report_settings(conn, company_id=company_id)
        query = choose_query(settings)
        report = (
            read_report(
                conn,
                company_id=company_id,
                company_name=company_name,
                query=query,
                tz=tz,
                settings=settings,
                compare=True,
                facts=as_filed,
            )
            if isinstance(query, ReportQuery)
            else None
        )
        if report is not None and as_filed:
            filed = filing_as_it_stands(
                conn,
                company_id=company_id,
                period=query.period,
                figures=report.live or report.figures,
                tz=tz,
                now=report.as_of,
            )
            report.figures, report.mask, report.corrections = filed.figures, filed.mask, filed.corrections
            report.comparison = filed.comparison
            if filed.report_id:  # filed: the ID and the moment every copy of the filing states
                report.report_id = filed.report_id
                report.as_of = report.as_of if report.closure else filed.filed_at
        start = read_company_start(conn, company_id=company_id, tz=tz)
    return ReportPage(settings, query, report, start)


def read_report(
    conn: sa.Connection,
    *,
    company_id: int,
    company_name: str,
    query: ReportQuery,
    tz: ZoneInfo,
    settings: ReportSettings | None = None,
    facts: bool = False,
    compare: bool = False,
) -> Report:
    """`compare`: read the goal and the year before too (the page; a filing output states those its
    filing stored). `facts`: for a filing, which lists nobody: what its mask needs, and no one's row."""
    settings = settings or read_report_settings(conn, company_id=company_id)
    live = read_figures(conn, company_id=company_id, query=query, tz=tz, facts=facts, listed=not facts)
    closure = read_closure_for(conn, company_id=company_id, period=query.period)
    if closure is None:
        as_of = now_iso()
        return Report(
            company_id,
            company_name,
            query,
            tz,
            live,
            as_of,
            live_report_id(company_id, query, as_of),
            settings,
            comparison=live_comparison(conn, company_id=company_id, query=query, figures=live, settings=settings, tz=tz)
            if compare
            else None,
        )
    filed = closure.figures(query.programme)
    late = read_corrections_since(conn, company_id=company_id, period=query.period, tz=tz, closed_at=closure.closed_at)
    changes = Changes(
        late.records,
        hours_change(live.total.minutes, filed.total.minutes),
        live.total.sessions - filed.total.sessions,
        live.total.volunteers - filed.total.volunteers,
        late.people,
    )
    filed_settings = ReportSettings(**closure.snapshot["settings"])
    return Report(
        company_id,
        company_name,
        query,
        tz,
        filed,
        closure.closed_at,
        closure.report_id,
        filed_settings,
        closure,
        live,
        changes,
        comparison=live_comparison(conn, company_id=company_id, query=query, figures=filed, settings=settings, tz=tz)
        if compare
        else None,
    )
