"""Reads for the report besides its figures: the counted sessions, settings, closures, and the
sessions one volunteer sees of their own, and a certificate by its ID.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from typing import NamedTuple
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core.db import Database, json_array
from portal.core.periods import Period
from portal.core.programmes import PROGRAMMES
from portal.reports.certificate import Certificate, find_certificate
from portal.reports.figures import COUNTED_SCOPE, OWN_TIME_COUNTED, Figures
from portal.reports.goals import read_goal
from portal.reports.selection import Drill, ReportQuery
from portal.web.paging import Page, limits


@dataclass(frozen=True)
class SessionLine:
    held_at: str
    platform: str
    name: str
    email: str
    minutes: int
    session_id: str
    source: str
    received_at: str
    updated_at: str = ""  # the platform's time of this version of the record (a correction's)
    user_id: int | None = None


# A session record as a list shows it (SessionLine), with its colleague's name where they have one.
_RECORDS = """SELECT a.id, a.held_at, a.platform, COALESCE(NULLIF(u.name, ''), a.volunteer_email) AS name,
           a.volunteer_email AS email, a.minutes, a.session_id, COALESCE(a.source, '') AS source, a.received_at,
           a.updated_at, a.user_id
    FROM attendance_sessions a LEFT JOIN users u ON u.id = a.user_id"""


def _sessions_sql(where: str) -> sa.TextClause:
    """Counted session records, oldest first, a page at a time from a (held_at, id) key."""
    return sa.text(f"""
    {_RECORDS}
    WHERE {where} AND (a.held_at > :after_held OR (a.held_at = :after_held AND a.id > :after_id))
    ORDER BY a.held_at, a.id
    LIMIT :limit
""")


SESSIONS_PAGE = _sessions_sql(COUNTED_SCOPE)


def _line(row) -> SessionLine:
    return SessionLine(
        row.held_at,
        row.platform,
        row.name,
        row.email,
        row.minutes,
        row.session_id,
        row.source,
        row.received_at,
        row.updated_at,
        row.user_id,
    )


def _scope_params(company_id: int, query: ReportQuery, tz: ZoneInfo) -> dict:
    start, end = query.period.utc_bounds(tz)
    return {"company_id": company_id, "start": start, "end": end, "programmes": json_array(query.programmes)}


def _keyset(db: Database, statement: sa.TextClause, params: dict, page_size: int):
    params = {**params, "after_held": "", "after_id": 0, "limit": page_size}
    while True:
        with db.read() as conn:
            page = conn.execute(statement, params).all()
        yield from map(_line, page)
        if len(page) < page_size:
            return
        params["after_held"], params["after_id"] = page[-1].held_at, page[-1].id


def iter_sessions(db: Database, *, company_id: int, query: ReportQuery, tz: ZoneInfo, page_size: int = 5000):
    """Every counted session of the report, oldest first, read a page at a time (constant memory)."""
    return _keyset(db, SESSIONS_PAGE, _scope_params(company_id, query, tz), page_size)


# The list of session records one figure counts (issue 50, item 2): the figure's own WHERE
# (figures.counted_scope), narrowed, for a colleague's or a department's figures, exactly as the
# page groups them (hours_by_department reads a colleague's department by the same company scope).
BY_VOLUNTEER = "AND a.user_id = :volunteer"
IN_DEPARTMENT = (
    "AND a.user_id IN (SELECT d.id FROM users d WHERE d.company_id = :company_id AND d.department = :department)"
)
NO_DEPARTMENT = (
    "AND a.user_id NOT IN (SELECT d.id FROM users d WHERE d.company_id = :company_id "
    "AND COALESCE(d.department, '') <> '')"
)


def drill_where(drill: Drill) -> tuple[str, dict]:
    """The WHERE of a figure's list, and its parameters besides the report's scope."""
    where, params = COUNTED_SCOPE, {}
    if drill.volunteer is not None:
        where, params["volunteer"] = f"{where} {BY_VOLUNTEER}", drill.volunteer
    if drill.department is not None:
        where = f"{where} {IN_DEPARTMENT if drill.department else NO_DEPARTMENT}"
        params["department"] = drill.department
    return where, params


def drill_totals_sql(where: str) -> sa.TextClause:
    return sa.text(f"""
    SELECT COUNT(*) AS sessions, COALESCE(SUM(a.minutes), 0) AS minutes, COUNT(DISTINCT a.user_id) AS volunteers
    FROM attendance_sessions a WHERE {where}
""")


def drill_page_sql(where: str) -> sa.TextClause:
    return sa.text(f"""
    {_RECORDS}
    WHERE {where}
    ORDER BY a.held_at, a.id
    LIMIT :limit OFFSET :offset
""")


# The year's closure that covers a list's period, if any: the page then shows filed figures.
CLOSURE_COVERING = sa.text("""
    SELECT year_label, closed_at, report_id FROM report_closures
    WHERE company_id = :company_id AND period_start <= :start AND period_end >= :end
""")


class DrillTotals(NamedTuple):
    sessions: int
    minutes: int
    volunteers: int


@dataclass(frozen=True)
class DrillList:
    totals: DrillTotals
    page: Page
    closure: sa.Row | None  # (year_label, closed_at, report_id) when the period is in a closed year
    late: int  # of the listed records, those received after that close


def drill_list(db: Database, *, company_id: int, drill: Drill, tz: ZoneInfo, number: int, per_page: int) -> DrillList:
    """One page of the session records a figure counts, with what they add up to; one transaction."""
    where, extra = drill_where(drill)
    params = {**_scope_params(company_id, drill.query, tz), **extra}
    period = drill.query.period
    with db.read() as conn:
        totals = DrillTotals(*conn.execute(drill_totals_sql(where), params).one())
        rows = conn.execute(drill_page_sql(where), {**params, **limits(number, per_page)}).all()
        closure = conn.execute(
            CLOSURE_COVERING,
            {"company_id": company_id, "start": period.start.isoformat(), "end": period.end.isoformat()},
        ).first()
        late = 0
        if closure is not None:
            late = conn.execute(
                sa.text(f"SELECT COUNT(*) FROM attendance_sessions a WHERE {where} AND a.received_at > :closed_at"),
                {**params, "closed_at": closure.closed_at},
            ).scalar()
    return DrillList(totals, Page([_line(r) for r in rows], totals.sessions, number, per_page), closure, late)


def iter_drill(db: Database, *, company_id: int, drill: Drill, tz: ZoneInfo, page_size: int = 5000):
    """Every record of a figure's list, oldest first, a page at a time (the CSV streams it)."""
    where, extra = drill_where(drill)
    return _keyset(db, _sessions_sql(where), {**_scope_params(company_id, drill.query, tz), **extra}, page_size)


CORRECTIONS = sa.text("""
    SELECT COUNT(*) AS records, COUNT(DISTINCT a.volunteer_email) AS people FROM attendance_sessions a
    WHERE a.company_id = :company_id AND a.held_at >= :start AND a.held_at < :end AND a.received_at > :closed_at
""")


class Corrections(NamedTuple):
    records: int  # session records for the period received after the close (new, changed or cancelled)
    people: int  # the colleagues those records are about


def read_corrections_since(
    conn: sa.Connection, *, company_id: int, period: Period, tz: ZoneInfo, closed_at: str
) -> Corrections:
    start, end = period.utc_bounds(tz)
    row = conn.execute(CORRECTIONS, {"company_id": company_id, "start": start, "end": end, "closed_at": closed_at})
    return Corrections(*row.one())


@dataclass(frozen=True)
class ReportSettings:
    fiscal_year_start_month: int = 1
    hourly_cost: str | None = None
    currency: str = "NOK"
    company_time_percent: int = 100


def report_settings(db: Database, *, company_id: int) -> ReportSettings:
    with db.read() as conn:
        return read_report_settings(conn, company_id=company_id)


def read_report_settings(conn: sa.Connection, *, company_id: int) -> ReportSettings:
    row = (
        conn.execute(
            sa.text(
                "SELECT fiscal_year_start_month, hourly_cost, currency, company_time_percent "
                "FROM company_report_settings WHERE company_id = :c"
            ),
            {"c": company_id},
        )
        .mappings()
        .first()
    )
    return ReportSettings(**row) if row else ReportSettings()


def goals_of(db: Database, *, company_id: int, years) -> list:
    """The goals of each of `years` (report years, as periods), in their order."""
    with db.read() as conn:
        return [read_goal(conn, company_id=company_id, year=year) for year in years]


@dataclass(frozen=True)
class Closure:
    id: int
    year_label: str
    period_start: str
    period_end: str
    closed_at: str
    closed_by_name: str
    report_id: str
    snapshot: dict

    @property
    def period(self) -> Period:
        return Period(
            date.fromisoformat(self.period_start), date.fromisoformat(self.period_end), self.year_label, "closed_year"
        )

    def figures(self, programme: str) -> Figures:
        return Figures.from_dict(self.snapshot["figures"][programme])


def closures(db: Database, *, company_id: int) -> list[Closure]:
    with db.read() as conn:
        return read_closures(conn, company_id=company_id)


def read_closures(conn: sa.Connection, *, company_id: int) -> list[Closure]:
    rows = (
        conn.execute(
            sa.text(
                "SELECT r.id, r.year_label, r.period_start, r.period_end, r.closed_at, "
                "COALESCE(NULLIF(u.name, ''), u.email, '') AS closed_by_name, r.report_id, r.snapshot "
                "FROM report_closures r LEFT JOIN users u ON u.id = r.closed_by "
                "WHERE r.company_id = :c ORDER BY r.period_start DESC"
            ),
            {"c": company_id},
        )
        .mappings()
        .all()
    )
    return [Closure(**{**row, "snapshot": json.loads(row["snapshot"])}) for row in rows]


def read_closure_for(conn: sa.Connection, *, company_id: int, period: Period) -> Closure | None:
    """The closure of exactly this period, if the year was closed."""
    row = (
        conn.execute(
            sa.text(
                "SELECT r.id, r.year_label, r.period_start, r.period_end, r.closed_at, "
                "COALESCE(NULLIF(u.name, ''), u.email, '') AS closed_by_name, r.report_id, r.snapshot "
                "FROM report_closures r LEFT JOIN users u ON u.id = r.closed_by "
                "WHERE r.company_id = :c AND r.period_start = :start AND r.period_end = :end"
            ),
            {"c": company_id, "start": period.start.isoformat(), "end": period.end.isoformat()},
        )
        .mappings()
        .first()
    )
    return None if row is None else Closure(**{**row, "snapshot": json.loads(row["snapshot"])})


@dataclass(frozen=True)
class OwnSession:
    held_at: str
    platform: str
    minutes: int
    status: str
    own_time: bool = False  # held in the volunteer's own time, not working time


@dataclass(frozen=True)
class OwnTimeChoice:
    counted: bool  # own-time hours count in the employer's report
    chosen_at: str | None  # None: never chosen, so not counted (the default)


# A volunteer's latest choice: whether their own-time hours count in their employer's report.
LATEST_OWN_TIME_CHOICE = sa.text(
    "SELECT counted, chosen_at FROM own_time_choices WHERE user_id = :u ORDER BY id DESC LIMIT 1"
)
ADD_OWN_TIME_CHOICE = sa.text("INSERT INTO own_time_choices (user_id, counted, chosen_at) VALUES (:u, :counted, :now)")


def own_time_choice(db: Database, *, user_id: int) -> OwnTimeChoice:
    with db.read() as conn:
        row = conn.execute(LATEST_OWN_TIME_CHOICE, {"u": user_id}).first()
    return OwnTimeChoice(False, None) if row is None else OwnTimeChoice(bool(row.counted), row.chosen_at)


def own_sessions(db: Database, *, user_id: int) -> list[OwnSession]:
    """An employee's own session records, newest first (by user, whichever company they were in)."""
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT held_at, platform, minutes, status, own_time FROM attendance_sessions "
                "WHERE user_id = :u ORDER BY held_at DESC"
            ),
            {"u": user_id},
        ).all()
    return [OwnSession(*row[:4], bool(row[4])) for row in rows]


def certificate_by_id(db: Database, *, certificate_id: str) -> Certificate | None:
    """A certificate as it was issued (the public verify page reads it), or None."""
    with db.read() as conn:
        return find_certificate(conn, certificate_id)


def programme_label(programme: str) -> str:
    return PROGRAMMES.get(programme, programme)


@dataclass(frozen=True)
class Person:
    id: int
    name: str
    email: str
    programme: str | None


def volunteer_sessions(db: Database, *, company_id: int, user_id: int) -> tuple[Person, list[OwnSession]] | None:
    """A colleague's sessions counted for this company, or None when they were never in it. Own-time
    sessions only if the colleague chose to count them (figures.OWN_TIME_COUNTED): their manager sees
    what the report counts, and the page's total is the report's."""
    with db.read() as conn:
        person = conn.execute(
            sa.text("""
            SELECT u.id, u.name, u.email, u.programme FROM users u
            WHERE u.id = :u AND u.role = 'employee'
              AND (u.company_id = :c OR EXISTS (SELECT 1 FROM company_memberships m
                                                WHERE m.user_id = u.id AND m.company_id = :c))
        """),
            {"u": user_id, "c": company_id},
        ).first()
        if person is None:
            return None
        rows = conn.execute(
            sa.text(
                "SELECT a.held_at, a.platform, a.minutes, a.status, a.own_time FROM attendance_sessions a "
                f"WHERE a.user_id = :u AND a.company_id = :c AND {OWN_TIME_COUNTED} ORDER BY a.held_at DESC"
            ),
            {"u": user_id, "c": company_id},
        ).all()
    return Person(*person), [OwnSession(*row[:4], bool(row[4])) for row in rows]


def local_date(held_at: str, tz: ZoneInfo) -> str:
    from portal.core.clock import parse

    return parse(held_at).astimezone(tz).date().isoformat()


# When the company began (it joined, a colleague's membership began, or, for imported history, a
# session was held: whichever is first; periods, year close and month lists start there), whether
# anyone ever attended, and how many colleagues have an employee account now. One statement.
COMPANY_START = sa.text("""
    SELECT
        (SELECT MIN(moment) FROM (
            SELECT created_at AS moment FROM companies WHERE id = :company_id
            UNION ALL SELECT MIN(started_at) FROM company_memberships WHERE company_id = :company_id
            UNION ALL SELECT MIN(held_at) FROM attendance_sessions
                      WHERE company_id = :company_id AND company_id IS NOT NULL
        ) WHERE moment IS NOT NULL) AS began,
        EXISTS (SELECT 1 FROM attendance_sessions WHERE company_id = :company_id AND status = 'attended')
            AS attended,
        (SELECT COUNT(*) FROM company_memberships m JOIN users u ON u.id = m.user_id AND u.role = 'employee'
         WHERE m.company_id = :company_id AND m.ended_at IS NULL) AS employees
""")


@dataclass(frozen=True)
class CompanyStart:
    started_on: date  # local date
    has_sessions: bool  # any attended session ever
    employees: int  # colleagues with an employee account now


def company_name(db: Database, *, company_id: int) -> str | None:
    with db.read() as conn:
        return conn.execute(sa.text("SELECT name FROM companies WHERE id = :id"), {"id": company_id}).scalar()


def company_start(db: Database, *, company_id: int, tz: ZoneInfo) -> CompanyStart:
    with db.read() as conn:
        return read_company_start(conn, company_id=company_id, tz=tz)


def read_company_start(conn: sa.Connection, *, company_id: int, tz: ZoneInfo) -> CompanyStart:
    began, attended, employees = conn.execute(COMPANY_START, {"company_id": company_id}).one()
    return CompanyStart(local_date_of(began, tz), bool(attended), employees)


def local_date_of(moment: str, tz: ZoneInfo) -> date:
    from portal.core.clock import parse

    return parse(moment).astimezone(tz).date()


@dataclass(frozen=True)
class DepartmentHours:
    department: str | None  # None: volunteers without a department
    minutes: int
    volunteers: int


def hours_by_department(db: Database, *, company_id: int, volunteers) -> list[DepartmentHours]:
    """The live report's volunteers' minutes summed by each one's department (users.department, from
    the CSV import or the directory), most hours first; [] when nobody has a department. The live page
    only: the filing PDF names no groups this small."""
    ids = [v.user_id for v in volunteers]
    if not ids:
        return []
    with db.read() as conn:
        departments = dict(
            conn.execute(
                sa.text(
                    "SELECT id, department FROM users WHERE company_id = :company_id "
                    "AND id IN (SELECT value FROM json_each(:ids))"
                ),
                {"company_id": company_id, "ids": json_array(ids)},
            ).all()
        )
    if not any(departments.values()):
        return []
    totals: dict[str | None, list[int]] = {}
    for volunteer in volunteers:
        cell = totals.setdefault(departments.get(volunteer.user_id) or None, [0, 0])
        cell[0] += volunteer.minutes
        cell[1] += 1
    rows = [DepartmentHours(name, minutes, count) for name, (minutes, count) in totals.items()]
    return sorted(rows, key=lambda row: (row.department is None, -row.minutes, row.department or ""))
