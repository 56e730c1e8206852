"""What an admin sees across every partner company."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import NamedTuple
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database
from portal.core.periods import Period
from portal.reports import OWN_TIME_COUNTED
from portal.web.paging import like_pattern


def company_summaries(db: Database, *, query: str = "") -> list[dict]:
    """Every partner company whose name contains `query`, by name, with its people and the day it joined."""
    where, params = "1=1", {}
    if query.strip():
        where, params = "c.name_key LIKE :p ESCAPE '\\'", {"p": like_pattern(query)}
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                f"""
                SELECT c.id, c.name, c.created_at,
                       SUM(u.role = 'manager' AND u.deactivated_at IS NULL) AS managers,
                       SUM(u.role = 'employee' AND u.deactivated_at IS NULL) AS employees
                FROM companies c LEFT JOIN users u ON u.company_id = c.id
                WHERE {where}
                GROUP BY c.id ORDER BY c.name
                """
            ),
            params,
        ).mappings()
        return [dict(row) for row in rows]


def company(db: Database, company_id: int) -> dict | None:
    with db.read() as conn:
        row = (
            conn.execute(
                sa.text("SELECT id, name, name_key, created_at FROM companies WHERE id = :id"), {"id": company_id}
            )
            .mappings()
            .first()
        )
    return dict(row) if row else None


def company_applications(db: Database, company: dict) -> list[dict]:
    """The applications that made this company a partner or name it, newest first."""
    with db.read() as conn:
        return [
            dict(row)
            for row in conn.execute(
                sa.text(
                    "SELECT id, contact_name, contact_email, state, created_at FROM company_applications "
                    "WHERE company_id = :id OR company_key = :key ORDER BY created_at DESC, id DESC LIMIT 50"
                ),
                {"id": company["id"], "key": company["name_key"]},
            ).mappings()
        ]


# What the partners overview calls an active volunteer: an attended session in the last ACTIVE_DAYS.
ACTIVE_DAYS = 90
# A year's hours within this many percent of last year's (to the same date) are "flat".
FLAT_PERCENT = 5
TRENDS = ("up", "down", "flat")


@dataclass(frozen=True)
class PartnerFigures:
    """One partner company on the partners overview. Minutes are attended minutes of the sessions the
    company's volunteers attended while they belonged to it (as its report counts them)."""

    company_id: int
    name: str
    minutes_this_year: int
    minutes_last_year: int  # from 1 January last year to the same date last year
    active_volunteers: int
    last_session_at: str | None

    @property
    def change_percent(self) -> float | None:
        """This year's hours against last year's to the same date, in percent; None without last year's."""
        if not self.minutes_last_year:
            return None
        return 100 * (self.minutes_this_year - self.minutes_last_year) / self.minutes_last_year

    @property
    def trend(self) -> str:
        change = self.change_percent
        if change is None:
            return "up" if self.minutes_this_year else "flat"
        if abs(change) < FLAT_PERCENT:
            return "flat"
        return "up" if change > 0 else "down"


class Overview(NamedTuple):
    rows: list[PartnerFigures]
    this_year: Period
    last_year: Period
    active_since: date  # the first local day an active volunteer's session may fall on


def same_day_last_year(day: date) -> date:
    """The same date a year earlier; 29 February becomes the 28th."""
    return day.replace(year=day.year - 1, day=min(day.day, 28 if day.month == 2 else day.day))


# Every company, with its attended minutes in two windows, the volunteers active since a moment, and
# its latest attended session until now, counting sessions as the company's report does (own time only
# where the volunteer chose). One pass over attendance_sessions_report's index.
_PARTNERS = sa.text(f"""
    SELECT c.id AS company_id, c.name,
           COALESCE(SUM(CASE WHEN a.held_at >= :this_from AND a.held_at < :this_to THEN a.minutes END), 0)
               AS minutes_this_year,
           COALESCE(SUM(CASE WHEN a.held_at >= :last_from AND a.held_at < :last_to THEN a.minutes END), 0)
               AS minutes_last_year,
           COUNT(DISTINCT CASE WHEN a.held_at >= :active_from AND a.held_at <= :now THEN a.user_id END)
               AS active_volunteers,
           MAX(CASE WHEN a.held_at <= :now THEN a.held_at END) AS last_session_at
    FROM companies c
    LEFT JOIN attendance_sessions a ON a.company_id = c.id AND a.status = 'attended' AND {OWN_TIME_COUNTED}
    GROUP BY c.id
    ORDER BY c.name_key, c.id
""")


def partner_overview(db: Database, *, now: datetime, tz: ZoneInfo) -> Overview:
    """Every partner company's hours this year and last year to the same date (local days in `tz`),
    its active volunteers and its last session, as of `now`."""
    today = now.astimezone(tz).date()
    this_year = Period(date(today.year, 1, 1), today, str(today.year), "year_to_date")
    last_year = Period(date(today.year - 1, 1, 1), same_day_last_year(today), str(today.year - 1))
    active_from = now - timedelta(days=ACTIVE_DAYS)
    (this_from, this_to), (last_from, last_to) = this_year.utc_bounds(tz), last_year.utc_bounds(tz)
    params = {
        "this_from": this_from,
        "this_to": this_to,
        "last_from": last_from,
        "last_to": last_to,
        "active_from": clock.iso(active_from),
        "now": clock.iso(now),
    }
    with db.read() as conn:
        rows = [PartnerFigures(**row) for row in conn.execute(_PARTNERS, params).mappings()]
    return Overview(rows, this_year, last_year, active_from.astimezone(tz).date())
