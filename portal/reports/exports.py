"""CSV and XLSX exports: exactly the filtered view, plus every counted session, with a column dictionary.

The CSV streams as a generator of lines; the XLSX (xlsx.py) is built from the same rows.

Languages: the rows here carry the stable English machine names (section titles, column headers,
the keys of the header block and the summary), marked for the catalogue. The CSV is for programs
as much as for people, so it keeps them in English in every language, its first row included; only
its explanations (the dictionary's meanings, the notes) are in the reader's language. The XLSX is
for people: xlsx.py translates its sheet names, headers and keys too (`column_title`, `translate`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

from openpyxl.cell import WriteOnlyCell

from portal.core.clock import parse
from portal.core.i18n import ENGLISH, N_, signed_number, translate
from portal.core.programmes import PROGRAMMES
from portal.reports.figures import DENOMINATOR_TEXT
from portal.reports.hours import hours_of, signed_hours_text
from portal.reports.labels import month_row_label, name_label
from portal.reports.queries import SessionLine
from portal.reports.report import Report

# The sections' titles (the CSV's "## ..." lines, the XLSX's section and sheet names).
SUMMARY, BY_PROGRAMME, BY_MONTH = N_("Summary"), N_("By programme"), N_("By month")
VOLUNTEERS, SESSIONS, ANY = N_("Volunteers"), N_("Sessions"), N_("Any")

DICTIONARY = [
    (
        SUMMARY,
        "figure / value",
        N_(
            "One headline figure a row: verified hours, sessions, active volunteers, "
            "colleagues (the participation denominator) and the participation rate in %."
        ),
    ),
    (BY_PROGRAMME, "programme", N_("TEEI Language or TEEI Mentorship.")),
    (
        BY_PROGRAMME,
        "hours",
        N_("Verified hours: attended session minutes / 60, rounded to 0.01 (half up), each figure on its own."),
    ),
    (BY_PROGRAMME, "minutes", N_("Attended session minutes, exact.")),
    (BY_PROGRAMME, "sessions", N_("Attended session records.")),
    (BY_PROGRAMME, "volunteers", N_("Distinct colleagues with at least one attended session.")),
    (BY_PROGRAMME, "participation_pct", N_("volunteers / colleagues in the period x 100.")),
    (BY_MONTH, "month", N_("Local calendar month (time zone above), clipped to the period.")),
    (BY_MONTH, "hours_<programme>", N_("Verified hours of that programme in that month.")),
    (VOLUNTEERS, "name / email", N_("The colleague, as their account names them.")),
    (VOLUNTEERS, "programmes", N_("Programmes with an attended session in the period.")),
    (SESSIONS, "held_at_local", N_("When the session began, local time (time zone above).")),
    (SESSIONS, "held_at_utc", N_("When the session began, UTC, as the platform sent it.")),
    (SESSIONS, "session_id", N_("The platform's identifier of the session.")),
    (
        ANY,
        "any text",
        N_(
            "In the CSV, a text beginning with = + - @ (a name, say) starts with an apostrophe, "
            "so spreadsheet programs show it instead of running it as a formula."
        ),
    ),
    (
        SESSIONS,
        "source",
        N_(
            "How the record reached the portal: api (signed push), import (CSV file), "
            "legacy (before attendance was pushed)."
        ),
    ),
    (SESSIONS, "received_at", N_("When the portal received this version of the record (UTC).")),
]

# The machine column names as the XLSX heads its columns in the reader's language (English: the
# names themselves, as the CSV has them).
COLUMN_TITLES = {
    "figure": N_("figure"),
    "value": N_("value"),
    "programme": N_("programme"),
    "hours": N_("hours"),
    "minutes": N_("minutes"),
    "sessions": N_("sessions"),
    "volunteers": N_("volunteers"),
    "participation_pct": N_("participation_pct"),
    "month": N_("month"),
    "from": N_("from"),
    "to": N_("to"),
    "name": N_("name"),
    "email": N_("email"),
    "programmes": N_("programmes"),
    "held_at_local": N_("held_at_local"),
    "held_at_utc": N_("held_at_utc"),
    "session_id": N_("session_id"),
    "source": N_("source"),
    "received_at": N_("received_at"),
    "section": N_("section"),
    "sheet": N_("sheet"),
    "column": N_("column"),
    "meaning": N_("meaning"),
    "figure / value": N_("figure / value"),
    "hours_<programme>": N_("hours_<programme>"),
    "name / email": N_("name / email"),
    "any text": N_("any text"),
}


def column_title(name: str, language: str) -> str:
    """A machine column name as the XLSX heads it in `language`."""
    if name in COLUMN_TITLES:
        return translate(language, COLUMN_TITLES[name])
    programme = name.removeprefix("hours_")
    if programme in PROGRAMMES:
        shown = programme if language == ENGLISH else PROGRAMMES[programme].replace("TEEI ", "")
        return translate(language, "hours_%(programme)s", programme=shown)
    return name


def dictionary_rows(language: str, *, machine: bool) -> list[tuple[str, str, str]]:
    """The column dictionary in `language`: its meanings always; with `machine` (the CSV) its sections
    and columns keep their English machine names, otherwise they are translated as the XLSX heads them."""
    if machine:
        return [(section, column, translate(language, meaning)) for section, column, meaning in DICTIONARY]
    return [
        (translate(language, section), column_title(column, language), translate(language, meaning))
        for section, column, meaning in DICTIONARY
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


TITLE = N_("TEEI partner portal: volunteering report")
PERIOD_FROM, PERIOD_TO, VERIFIED_HOURS = N_("Period from"), N_("Period to"), N_("Verified hours")


def header_rows(report: Report, language: str = ENGLISH) -> list[list]:
    """The header block: English keys (the CSV's; xlsx.py translates them), the notes in `language`."""
    period = report.query.period
    rows = [
        [TITLE],
        [N_("Company"), report.company_name],
        [PERIOD_FROM, period.start.isoformat()],
        [PERIOD_TO, period.end.isoformat()],
        [N_("Time zone"), str(report.tz)],
        [N_("Programme"), report.query.programme],
        [N_("As of"), report.as_of],
        [N_("Report ID"), report.report_id],
        [N_("Participation denominator"), translate(language, DENOMINATOR_TEXT)],
    ]
    note = report.figures.rounding_note_in(language)
    if note:
        rows.append([N_("Rounding"), note])
    if report.closure:
        closed = translate(
            language,
            "%(year)s closed %(closed_at)s; figures are the filed ones",
            year=name_label(report.closure.year_label, language),
            closed_at=report.closure.closed_at,
        )
        rows.append([N_("Closed"), closed])
        changes = translate(
            language,
            "%(records)s records; %(hours)s hours; %(sessions)s sessions",
            records=report.changes.records,
            hours=signed_hours_text(report.changes.hours, language),
            sessions=signed_number(report.changes.sessions, language, 0),
        )
        rows.append([N_("Changes since close"), changes])
    return rows


def summary_rows(report: Report) -> list[list]:
    f = report.figures
    return [
        ["figure", "value"],
        [VERIFIED_HOURS, f.total.hours],
        [N_("Minutes"), f.total.minutes],
        [N_("Sessions"), f.total.sessions],
        [N_("Active volunteers"), f.total.volunteers],
        [N_("Colleagues (denominator)"), f.employees],
        [N_("Participation rate (%)"), "" if f.participation is None else f.participation],
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


def month_rows(report: Report, language: str = ENGLISH) -> list[list]:
    """The months, each named in `language` (the CSV's: English, as stored)."""
    programmes = list(report.figures.programmes)
    rows = [["month", "from", "to", "hours", "minutes", "sessions", "volunteers"] + [f"hours_{p}" for p in programmes]]
    for m in report.figures.listed_months:
        rows.append(
            [
                month_row_label(m, language),
                m.start,
                m.end,
                m.total.hours,
                m.total.minutes,
                m.total.sessions,
                m.total.volunteers,
            ]
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


def streamed_writer():
    """A CSV writer for a streamed response, and the function that takes what it has written so far
    as text (emptying it): the caller yields that text every so many rows."""
    buffer = io.StringIO()

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    return csv.writer(buffer, lineterminator="\r\n"), flush


def csv_lines(report: Report, sessions: Iterable[SessionLine], language: str = ENGLISH) -> Iterator[str]:
    """The CSV, a line at a time: header block, dictionary, then one titled section per table.

    Machine-readable in every language: its first row, its section titles ("## Summary"), its column
    headers and its keys stay the stable English names programs rely on, and its figures stay plain
    numbers (29.25); only the notes and the dictionary's meanings are in `language`."""
    writer, flush = streamed_writer()
    for row in header_rows(report, language):
        writer.writerow(csv_safe(row))
    writer.writerow([])
    writer.writerow(["## Column dictionary"])
    writer.writerow(["section", "column", "meaning"])
    writer.writerows(dictionary_rows(language, machine=True))
    for title, rows in (
        (SUMMARY, summary_rows(report)),
        (BY_PROGRAMME, programme_rows(report)),
        (BY_MONTH, month_rows(report)),
        (VOLUNTEERS, volunteer_rows(report)),
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


# The list of session records one figure counts (issue 50, item 2), as CSV: one header row and one
# row a record, the same in every language (ISO 8601 times, hours with a dot), for programs.
DRILL_COLUMNS = [
    "held_at_utc",
    "held_at_local",
    "programme",
    "name",
    "email",
    "minutes",
    "hours",
    "session_id",
    "source",
    "updated_at",
    "received_at",
]


def drill_csv_lines(sessions: Iterable[SessionLine], tz) -> Iterator[str]:
    """The records a line at a time (a figure's list can hold millions): `hours` is the record's
    minutes / 60 to 0.01, half up; the figure on the page is its list's minutes summed, then rounded."""
    writer, flush = streamed_writer()
    writer.writerow(DRILL_COLUMNS)
    yield "\ufeff" + flush()  # BOM: spreadsheet programs then read the names as UTF-8
    for count, line in enumerate(sessions, 1):
        local = parse(line.held_at).astimezone(tz).isoformat(timespec="minutes")
        writer.writerow(
            csv_safe(
                [
                    line.held_at,
                    local,
                    line.platform,
                    line.name,
                    line.email,
                    line.minutes,
                    str(hours_of(line.minutes)),
                    line.session_id,
                    line.source,
                    line.updated_at,
                    line.received_at,
                ]
            )
        )
        if count % 1000 == 0:
            yield flush()
    yield flush()
