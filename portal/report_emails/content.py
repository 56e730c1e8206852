"""What a report email says, fixed when its intent is written: the period's figures as of the run
(or, inside a closed year, as filed), stored as the row's template input.

The PDF is built from that stored input when the email is rendered, so the attachment shows exactly
the figures the email states, however late the delivery is; the first rendering is then frozen.
Names never go into the input: the filing PDF carries none.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core.clock import now_iso
from portal.core.db import Database
from portal.core.i18n import N_, language_of, number, percent, translate
from portal.core.periods import Period, period_key
from portal.core.programmes import PROGRAMMES
from portal.reports import (
    Cell,
    Changes,
    Closure,
    Comparison,
    Figures,
    FiledCorrections,
    FilingMask,
    Report,
    ReportQuery,
    ReportSettings,
    before_lines,
    before_note,
    choose_mask,
    counted_time_text,
    goal_lines,
    hours_change,
    hours_text,
    live_report_id,
    read_closures,
    read_corrections_since,
    read_figures,
    read_report_settings,
)

LIVE, SNAPSHOT = "live", "snapshot"
HIDDEN = N_("hidden")  # in the email's language where it is stated


@dataclass(frozen=True)
class PeriodFigures:
    figures: Figures
    source: str  # LIVE or SNAPSHOT
    as_of: str
    report_id: str
    closure: Closure | None = None
    changes: Changes | None = None  # live minus filed, for a period inside a closed year
    # False when a closed year's snapshot cannot give the exact distinct count (a quarter: the
    # snapshot counts volunteers per month), so the email says "at least".
    volunteers_exact: bool = True


def covering_closure(found: list[Closure], period: Period) -> Closure | None:
    start, end = period.start.isoformat(), period.end.isoformat()
    return next((c for c in found if c.period_start <= start and end <= c.period_end), None)


def snapshot_figures(closure: Closure, period: Period) -> tuple[Figures, bool]:
    """The period's months as filed in the closed year's snapshot."""
    filed = closure.figures("all")
    months = [m for m in filed.months if period.start.isoformat() <= m.start and m.end <= period.end.isoformat()]
    programmes = {p: Cell() for p in filed.programmes}
    for month in months:
        for p, cell in month.programmes.items():
            programmes[p].minutes += cell.minutes
            programmes[p].sessions += cell.sessions
            programmes[p].volunteers = max(programmes[p].volunteers, cell.volunteers)
    total = Cell(
        sum(m.total.minutes for m in months),
        sum(m.total.sessions for m in months),
        max((m.total.volunteers for m in months), default=0),
    )
    # Who was alone in a month, and its largest colleague, as the snapshot has them; a longer period's
    # largest colleague is bounded by the sum of its months' (dominance errs on hiding).
    keys = [m.start[:7] for m in months]
    inside = {f"{k}..{k}:{p}" for k in keys for p in [*filed.programmes, "all"]}
    largest = {key: n for key, n in filed.largest.items() if key in inside}
    alone = {key: who for key, who in filed.alone.items() if key in inside}
    if keys:
        for p in [*filed.programmes, "all"]:
            largest[f"{keys[0]}..{keys[-1]}:{p}"] = sum(largest.get(f"{k}..{k}:{p}", 0) for k in keys)
    # Whose own-time hours count is known for the whole closed year only (not for a month of it).
    own_time = filed.own_time_volunteers if len(months) == len(filed.months) else None
    figures = Figures(
        total, filed.employees, programmes, months, [], largest=largest, alone=alone, own_time_volunteers=own_time
    )
    return figures, len(months) == 1


def period_figures(conn: sa.Connection, *, company_id: int, period: Period, tz: ZoneInfo) -> PeriodFigures:
    """The figures the period's email states: the snapshot inside a closed year, else live now."""
    query = ReportQuery(period, "all")
    closure = covering_closure(read_closures(conn, company_id=company_id), period)
    if closure is not None:
        figures, exact = snapshot_figures(closure, period)
        live = read_figures(conn, company_id=company_id, query=query, tz=tz, listed=False)
        late = read_corrections_since(conn, company_id=company_id, period=period, tz=tz, closed_at=closure.closed_at)
        changes = Changes(
            late.records,
            hours_change(live.total.minutes, figures.total.minutes),
            live.total.sessions - figures.total.sessions,
            live.total.volunteers - figures.total.volunteers if exact else 0,
            late.people,
        )
        return PeriodFigures(figures, SNAPSHOT, closure.closed_at, closure.report_id, closure, changes, exact)
    # The PDF lists nobody: the outbox row keeps no per-person rows.
    figures = read_figures(conn, company_id=company_id, query=query, tz=tz, listed=False, facts=True)
    as_of = now_iso()
    return PeriodFigures(figures, LIVE, as_of, live_report_id(company_id, query, as_of))


def email_input(
    db: Database, *, company_id: int, company_name: str, period: Period, tz: ZoneInfo, kind: str
) -> tuple[dict, PeriodFigures]:
    """The template input shared by every recipient of one company's period (recipient fields are added per row).

    One read transaction: the figures, the closure and the settings are of one moment.
    """
    with db.read() as conn:
        found = period_figures(conn, company_id=company_id, period=period, tz=tz)
        settings = read_report_settings(conn, company_id=company_id)
    if found.closure is not None:
        settings = ReportSettings(**found.closure.snapshot["settings"])
    return {
        "kind": kind,  # scheduled | backfill | test
        "company_id": company_id,
        "company_name": company_name,
        "period": {
            "key": period_key(period),
            "label": period.label,
            "kind": period.kind,
            "start": period.start.isoformat(),
            "end": period.end.isoformat(),
        },
        "time_zone": str(tz),
        "figures": found.figures.to_dict(),
        "volunteers_exact": found.volunteers_exact,
        "source": found.source,
        "as_of": found.as_of,
        "report_id": found.report_id,
        "settings": asdict(settings),
        "closed": None
        if found.closure is None
        else {
            "year_label": found.closure.year_label,
            "closed_by_name": found.closure.closed_by_name,
            "changes": asdict(found.changes),
        },
    }, found


def period_of(data: dict) -> Period:
    p = data["period"]
    return Period(date.fromisoformat(p["start"]), date.fromisoformat(p["end"]), p["label"], p["kind"])


def report_from_input(data: dict) -> Report:
    """The Report the PDF module draws, rebuilt from an email's stored input (no database)."""
    tz = ZoneInfo(data["time_zone"])
    query = ReportQuery(period_of(data), "all")
    figures = Figures.from_dict(data["figures"])
    settings = ReportSettings(**data["settings"])
    closed = data.get("closed")
    closure = (
        Closure(0, closed["year_label"], "", "", data["as_of"], closed["closed_by_name"], data["report_id"], {})
        if closed
        else None
    )
    return Report(
        data["company_id"],
        data["company_name"],
        query,
        tz,
        figures,
        data["as_of"],
        data["report_id"],
        settings,
        closure,
        figures if closed else None,
        Changes(**closed["changes"]) if closed else None,
        mask_of(data),
        FiledCorrections.from_dict(data.get("corrections")),
        Comparison.from_dict(data.get("comparison")),
    )


def mask_of(data: dict) -> FilingMask:
    """The attachment's mask. An email written before masks were stored gets one chosen from its own
    figures alone."""
    if "mask" in data:
        return FilingMask.from_dict(data["mask"])
    return choose_mask(Figures.from_dict(data["figures"]), [])[0]


def headline(data: dict) -> dict:
    """The figures the email's body states, as text in the email's language: what its attached PDF
    hides, it hides too. Each programme is (name, hours, sessions, hidden)."""
    language = language_of(data)
    hidden = translate(language, HIDDEN)
    figures = Figures.from_dict(data["figures"])
    mask = mask_of(data)
    first, last = figures.months[0].start[:7], figures.months[-1].start[:7]
    exact = data.get("volunteers_exact", True)
    volunteers = number(figures.total.volunteers, language)
    rate = figures.participation if exact else None
    total_hidden = mask.hides(first, last)
    count_hidden = mask.hides_count(first, last)
    participation_hidden = mask.hides_participation(first, last)
    comparison = Comparison.from_dict(data.get("comparison"))
    return {
        # Which hours count (working time, and own time of volunteers who chose so), as the PDF says it.
        "counted_time": counted_time_text(figures, language, masked=True, count_hidden=count_hidden or not exact),
        # The goal and the year before, hidden as the attached PDF hides them (goals.py).
        "goals": goal_lines(
            comparison,
            participation=rate,
            participation_hidden=participation_hidden,
            language=language,
        ),
        "before": before_lines(
            comparison,
            figures=figures,
            total_hidden=total_hidden,
            count_hidden=count_hidden or not exact,
            participation_hidden=participation_hidden or not exact,
            language=language,
        ),
        "before_note": before_note(comparison, language),
        "before_period": None
        if comparison is None or comparison.before is None
        else translate(language, "%(start)s to %(end)s", start=comparison.before.start, end=comparison.before.end),
        "hours": hidden if total_hidden else hours_text(figures.total.minutes, language),
        "sessions": hidden if total_hidden else number(figures.total.sessions, language),
        "volunteers": hidden
        if count_hidden
        else (volunteers if exact else translate(language, "at least %(count)s", count=volunteers)),
        "participation": hidden if participation_hidden else ("–" if rate is None else percent(rate, language, 1)),
        "programmes": [
            (PROGRAMMES[p], hidden, hidden, True)
            if mask.hides(first, last, p)
            else (PROGRAMMES[p], hours_text(cell.minutes, language), number(cell.sessions, language), False)
            for p, cell in figures.programmes.items()
            if p in PROGRAMMES
        ],
    }
