"""CSV and XLSX exports: exactly the filtered view, plus every counted session, with a column dictionary.

The CSV streams as a generator of lines; the XLSX (xlsx.py) is built from the same rows.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

from openpyxl.cell import WriteOnlyCell

from portal.core.clock import parse
from portal.core.programmes import PROGRAMMES
from portal.reports.hours import signed_hours_text
from portal.reports.queries import SessionLine
from portal.reports.report import Report

DICTIONARY = [
    (
        "Summary",
        "figure / value",
        "One headline figure a row: verified hours, sessions, active volunteers, "
        "colleagues (the participation denominator) and the participation rate in %.",
    ),
    ("By programme", "programme", "TEEI Language or TEEI Mentorship."),
    (
        "By programme",
        "hours",
        "Verified hours: attended session minutes / 60, rounded to 0.01 (half up), each figure on its own.",
    ),
    ("By programme", "minutes", "Attended session minutes, exact."),
    ("By programme", "sessions", "Attended session records."),
    ("By programme", "volunteers", "Distinct colleagues with at least one attended session."),
    ("By programme", "participation_pct", "volunteers / colleagues in the period x 100."),
    ("By month", "month", "Local calendar month (time zone above), clipped to the period."),
    ("By month", "hours_<programme>", "Verified hours of that programme in that month."),
    ("Volunteers", "name / email", "The colleague, as their account names them."),
    ("Volunteers", "programmes", "Programmes with an attended session in the period."),
    ("Sessions", "held_at_local", "When the session began, local time (time zone above)."),
    ("Sessions", "held_at_utc", "When the session began, UTC, as the platform sent it."),
    ("Sessions", "session_id", "The platform's identifier of the session."),
    (
        "Any",
        "any text",
        "In the CSV, a text beginning with = + - @ (a name, say) starts with an apostrophe, "
        "so spreadsheet programs show it instead of running it as a formula.",
    ),
    (
        "Sessions",
        "source",
        "How the record reached the portal: api (signed push), import (CSV file), "
        "legacy (before attendance was pushed).",
    ),
    ("Sessions", "received_at", "When the portal received this version of the record (UTC)."),
]


# Texts a spreadsheet program would run as a formula ("CSV injection"): names, session IDs and the
# company's name come from people and platforms, and a formula can send other cells off to a website.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(row: list) -> list:
    """A CSV cell has no type: a leading apostrophe makes spreadsheet programs show the text as it is."""
    return ["'" + v if isinstance(v, str) and v.startswith(_FORMULA_START) else v for v in row]


def xlsx_safe(sheet, row: list) -> list:
    """An XLSX cell has a type: openpyxl would store a text beginning with "=" as a formula, so it is
    written as a text cell instead (shown exactly as it is, never run)."""
    safe = []
    for value in row:
        if isinstance(value, str) and value.startswith("="):
            value = WriteOnlyCell(sheet, value=value)
            value.data_type = "s"
        safe.append(value)
    return safe


def header_rows(report: Report) -> list[list]:
    period = report.query.period
    rows = [
        ["TEEI partner portal: volunteering report"],
        ["Company", report.company_name],
        ["Period from", period.start.isoformat()],
        ["Period to", period.end.isoformat()],
        ["Time zone", str(report.tz)],
        ["Programme", report.query.programme],
        ["As of", report.as_of],
        ["Report ID", report.report_id],
        ["Participation denominator", report.denominator_text],
    ]
    if report.figures.rounding_note:
        rows.append(["Rounding", report.figures.rounding_note])
    if report.closure:
        rows.append(
            ["Closed", f"{report.closure.year_label} closed {report.closure.closed_at}; figures are the filed ones"]
        )
        rows.append(
            [
                "Changes since close",
                f"{report.changes.records} records; {signed_hours_text(report.changes.hours)} hours; "
                f"{report.changes.sessions:+d} sessions",
            ]
        )
    return rows


def summary_rows(report: Report) -> list[list]:
    f = report.figures
    return [
        ["figure", "value"],
        ["Verified hours", f.total.hours],
        ["Minutes", f.total.minutes],
        ["Sessions", f.total.sessions],
        ["Active volunteers", f.total.volunteers],
        ["Colleagues (denominator)", f.employees],
        ["Participation rate (%)", "" if f.participation is None else f.participation],
    ]


def programme_rows(report: Report) -> list[list]:
    rows = [["programme", "hours", "minutes", "sessions", "volunteers", "participation_pct"]]
    for programme, cell in report.figures.programmes.items():
        rate = report.figures.participation_of(cell)
        rows.append(
            [
                PROGRAMMES[programme],
                cell.hours,
                cell.minutes,
                cell.sessions,
                cell.volunteers,
                "" if rate is None else rate,
            ]
        )
    return rows


def month_rows(report: Report) -> list[list]:
    programmes = list(report.figures.programmes)
    rows = [["month", "from", "to", "hours", "minutes", "sessions", "volunteers"] + [f"hours_{p}" for p in programmes]]
    for m in report.figures.listed_months:
        rows.append(
            [m.label, m.start, m.end, m.total.hours, m.total.minutes, m.total.sessions, m.total.volunteers]
            + [m.programmes[p].hours for p in programmes]
        )
    return rows


def volunteer_rows(report: Report) -> list[list]:
    rows = [["name", "email", "programmes", "sessions", "hours", "minutes"]]
    rows += [
        [v.name, v.email, " + ".join(PROGRAMMES[p] for p in v.programmes), v.sessions, v.hours, v.minutes]
        for v in report.figures.volunteers
    ]
    return rows


SESSION_COLUMNS = [
    "held_at_local",
    "held_at_utc",
    "programme",
    "name",
    "email",
    "minutes",
    "session_id",
    "source",
    "received_at",
]


def session_row(line: SessionLine, tz) -> list:
    local = parse(line.held_at).astimezone(tz).strftime("%Y-%m-%d %H:%M")
    return [
        local,
        line.held_at,
        line.platform,
        line.name,
        line.email,
        line.minutes,
        line.session_id,
        line.source,
        line.received_at,
    ]


def csv_lines(report: Report, sessions: Iterable[SessionLine]) -> Iterator[str]:
    """The CSV, a line at a time: header block, dictionary, then one titled section per table."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    for row in header_rows(report):
        writer.writerow(csv_safe(row))
    writer.writerow([])
    writer.writerow(["## Column dictionary"])
    writer.writerow(["section", "column", "meaning"])
    writer.writerows(DICTIONARY)
    for title, rows in (
        ("Summary", summary_rows(report)),
        ("By programme", programme_rows(report)),
        ("By month", month_rows(report)),
        ("Volunteers", volunteer_rows(report)),
    ):
        writer.writerow([])
        writer.writerow([f"## {title}"])
        writer.writerows(csv_safe(row) for row in rows)
    writer.writerow([])
    writer.writerow(["## Sessions"])
    writer.writerow(SESSION_COLUMNS)
    yield "\ufeff" + flush()  # BOM: spreadsheet programs then read the names as UTF-8
    for count, line in enumerate(sessions, 1):
        writer.writerow(csv_safe(session_row(line, report.tz)))
        if count % 1000 == 0:
            yield flush()
    yield flush()
