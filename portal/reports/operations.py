"""Writes for the report area: a company's report settings, closing a year, filing a download and
issuing a volunteer's certificate. One db.write() each."""

from __future__ import annotations

import json
from datetime import date
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core.clock import now_iso
from portal.core.db import Database
from portal.core.i18n import N_
from portal.core.periods import Period
from portal.reports.certificate import Certificate, issue_on
from portal.reports.figures import Figures, read_figures
from portal.reports.filing import Filed, file_on
from portal.reports.goals import SAVE_GOAL, Goal
from portal.reports.queries import ADD_OWN_TIME_CHOICE, ReportSettings
from portal.reports.selection import PROGRAMME_CHOICES, ReportQuery


class CloseError(ValueError):
    """The year cannot be closed; the message is safe to show. It is kept as its catalogue message
    and values (`year` names the year), so the page shows it in its reader's language."""

    def __init__(self, message: str, **values):
        super().__init__(message % values)
        self.message, self.values = message, values


def save_settings(db: Database, *, company_id: int, actor_id: int, values: ReportSettings) -> None:
    with db.write() as conn:
        conn.execute(
            sa.text("""
            INSERT INTO company_report_settings
                (company_id, fiscal_year_start_month, hourly_cost, currency, company_time_percent, updated_by, updated_at)
            VALUES (:c, :month, :cost, :currency, :share, :actor, :now)
            ON CONFLICT (company_id) DO UPDATE SET
                fiscal_year_start_month = excluded.fiscal_year_start_month, hourly_cost = excluded.hourly_cost,
                currency = excluded.currency, company_time_percent = excluded.company_time_percent,
                updated_by = excluded.updated_by, updated_at = excluded.updated_at
        """),
            {
                "c": company_id,
                "month": values.fiscal_year_start_month,
                "cost": values.hourly_cost,
                "currency": values.currency,
                "share": values.company_time_percent,
                "actor": actor_id,
                "now": now_iso(),
            },
        )


def save_goal(db: Database, *, company_id: int, actor_id: int, goal: Goal) -> None:
    """Set (or clear, with None) a report year's goals. A filing keeps the goals it printed."""
    with db.write() as conn:
        conn.execute(
            SAVE_GOAL,
            {
                "company_id": company_id,
                "year": goal.year_start,
                "hours": goal.hours,
                "participation": goal.participation,
                "actor": actor_id,
                "now": now_iso(),
            },
        )


def choose_own_time(db: Database, *, user_id: int, counted: bool, now: str) -> None:
    """A volunteer's choice whether their own-time hours count in their employer's report, recorded
    with its moment (every change a new row; the latest counts). It changes the live report from now
    on; a filed report keeps the hours it filed (filing.py)."""
    with db.write() as conn:
        conn.execute(ADD_OWN_TIME_CHOICE, {"u": user_id, "counted": int(counted), "now": now})


def file_download(db: Database, *, company_id: int, period: Period, figures: Figures, tz: ZoneInfo, now: str) -> Filed:
    """Record a filing PDF being downloaded (the first time, with its mask); returns what it shows."""
    with db.write() as conn:
        return file_on(conn, company_id=company_id, period=period, figures=figures, source="download", tz=tz, now=now)


def issue_certificate(
    db: Database, *, user_id: int, name: str, company_name: str, period: Period, tz: ZoneInfo, today: date, now: str
) -> Certificate | None:
    """A volunteer's certificate for `period`: the one already issued if it states the same, else a
    new one (certificate.py). None: no attended session in the period, nothing issued."""
    with db.write() as conn:
        return issue_on(
            conn, user_id=user_id, name=name, company_name=company_name, period=period, tz=tz, today=today, now=now
        )


def close_year(
    db: Database, *, company_id: int, actor_id: int, period: Period, today: date, tz: ZoneInfo, settings_snapshot: dict
) -> str:
    """Freeze every figure of a year that has ended; returns the report ID (the year's filing's:
    the one its PDFs already stated if it was filed before). A year closes once.

    The figures are read inside the write transaction, so no session lands between the read and
    the snapshot.
    """
    if period.end >= today:
        raise CloseError(
            N_("%(year)s has not ended yet: it can be closed from %(day)s on."),
            year=period.label,
            day=period.end.isoformat(),
        )
    closed_at = now_iso()
    with db.write() as conn:
        exists = conn.execute(
            sa.text("SELECT report_id FROM report_closures WHERE company_id = :c AND period_start = :s"),
            {"c": company_id, "s": period.start.isoformat()},
        ).scalar()
        if exists:
            raise CloseError(
                N_("%(year)s is already closed (report %(report_id)s)."), year=period.label, report_id=exists
            )
        snapshot = {
            "figures": {
                p: read_figures(
                    conn, company_id=company_id, query=ReportQuery(period, p), tz=tz, facts=p == "all"
                ).to_dict()
                for p in PROGRAMME_CHOICES
            },
            "settings": settings_snapshot,
            "time_zone": str(tz),
            "as_of": closed_at,
        }
        # The year's filing PDF is fixed from here on: filed now, or as it was filed before the close.
        filed = file_on(
            conn,
            company_id=company_id,
            period=period,
            figures=Figures.from_dict(snapshot["figures"]["all"]),
            source="close",
            tz=tz,
            now=closed_at,
        )
        snapshot["mask"] = filed.mask.to_dict()
        report_id = filed.report_id
        conn.execute(
            sa.text("""
            INSERT INTO report_closures
                (company_id, year_label, period_start, period_end, closed_by, closed_at, report_id, snapshot)
            VALUES (:c, :label, :start, :end, :actor, :closed_at, :report_id, :snapshot)
        """),
            {
                "c": company_id,
                "label": period.label,
                "start": period.start.isoformat(),
                "end": period.end.isoformat(),
                "actor": actor_id,
                "closed_at": closed_at,
                "report_id": report_id,
                "snapshot": json.dumps(snapshot),
            },
        )
    return report_id
