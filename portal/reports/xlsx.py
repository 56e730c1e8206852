"""The XLSX working copy: the rows of exports.py as typed cells a spreadsheet can sort and sum.

Written by openpyxl in write-only mode to a temporary file (each row goes to disk as it is
appended), so 100,000 sessions take constant memory. Dates and times are real date cells, hours
are numbers with two decimals, each sheet's header row is bold, filled and frozen, and columns
have widths, all set before the first row as write-only mode requires.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from datetime import date, datetime

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font, PatternFill

from portal.core.clock import parse
from portal.reports.exports import (
    DICTIONARY,
    SESSION_COLUMNS,
    header_rows,
    month_rows,
    programme_rows,
    summary_rows,
    volunteer_rows,
    xlsx_safe,
)
from portal.reports.queries import SessionLine
from portal.reports.report import Report

HEADER_FONT = Font(bold=True)
HEADER_FILL = PatternFill("solid", fgColor="DCE3EF")
TITLE_FONT = Font(bold=True, size=13)
DATE_FORMAT = "yyyy-mm-dd"
TIME_FORMAT = "yyyy-mm-dd hh:mm"
HOURS_FORMAT = "#,##0.00"

REPORT_WIDTHS = (28, 16, 14, 12, 12, 12, 12, 16, 16)
VOLUNTEER_WIDTHS = (28, 34, 34, 10, 10, 10)
SESSION_WIDTHS = (18, 18, 12, 28, 34, 10, 30, 10, 18)
DICTIONARY_WIDTHS = (16, 22, 90)


def _sheet(book: Workbook, title: str, widths: tuple[int, ...], *, frozen: bool):
    sheet = book.create_sheet(title)
    for index, width in enumerate(widths):
        sheet.column_dimensions[chr(ord("A") + index)].width = width
    if frozen:
        sheet.freeze_panes = "A2"
    return sheet


def _header(sheet, names: list) -> list:
    cells = []
    for name in names:
        cell = WriteOnlyCell(sheet, value=name)
        cell.font, cell.fill = HEADER_FONT, HEADER_FILL
        cells.append(cell)
    return cells


def _typed(sheet, value, number_format: str | None):
    if number_format is None or value in ("", None):
        return value
    cell = WriteOnlyCell(sheet, value=value)
    cell.number_format = number_format
    return cell


def _row(sheet, row: list, formats: dict[int, str]) -> list:
    safe = xlsx_safe(sheet, row)
    return [_typed(sheet, value, formats.get(index)) for index, value in enumerate(safe)]


def _local_time(held_at: str, tz) -> datetime:
    return parse(held_at).astimezone(tz).replace(tzinfo=None)


def _utc_time(moment: str) -> datetime | str:
    return parse(moment).replace(tzinfo=None) if moment else ""


def write_xlsx(report: Report, sessions: Iterable[SessionLine]):
    """The XLSX in a temporary file (rewound)."""
    book = Workbook(write_only=True)
    sheet = _sheet(book, "Report", REPORT_WIDTHS, frozen=False)
    for index, row in enumerate(header_rows(report)):
        if index == 0:
            title = WriteOnlyCell(sheet, value=row[0])
            title.font = TITLE_FONT
            sheet.append([title])
        elif row[0] in ("Period from", "Period to"):
            sheet.append([row[0], _typed(sheet, date.fromisoformat(row[1]), DATE_FORMAT)])
        else:
            sheet.append(xlsx_safe(sheet, row))
    month_formats = {1: DATE_FORMAT, 2: DATE_FORMAT, 3: HOURS_FORMAT}
    month_formats |= {7 + i: HOURS_FORMAT for i in range(len(report.figures.programmes))}
    for title, rows, formats in (
        ("Summary", summary_rows(report), {}),
        ("By programme", programme_rows(report), {1: HOURS_FORMAT}),
        ("By month", month_rows(report), month_formats),
    ):
        sheet.append([])
        sheet.append([_typed(sheet, title, None)])
        sheet.append(_header(sheet, rows[0]))
        for row in rows[1:]:
            if title == "Summary" and row[0] == "Verified hours":
                sheet.append([row[0], _typed(sheet, row[1], HOURS_FORMAT)])
            elif title == "By month":
                row = [row[0], date.fromisoformat(row[1]), date.fromisoformat(row[2]), *row[3:]]
                sheet.append(_row(sheet, row, formats))
            else:
                sheet.append(_row(sheet, row, formats))

    people = _sheet(book, "Volunteers", VOLUNTEER_WIDTHS, frozen=True)
    rows = volunteer_rows(report)
    people.append(_header(people, rows[0]))
    for row in rows[1:]:
        people.append(_row(people, row, {4: HOURS_FORMAT}))

    lines = _sheet(book, "Sessions", SESSION_WIDTHS, frozen=True)
    lines.append(_header(lines, SESSION_COLUMNS))
    session_formats = {0: TIME_FORMAT, 1: TIME_FORMAT, 8: TIME_FORMAT}
    for line in sessions:
        row = [
            _local_time(line.held_at, report.tz),
            _utc_time(line.held_at),
            line.platform,
            line.name,
            line.email,
            line.minutes,
            line.session_id,
            line.source,
            _utc_time(line.received_at),
        ]
        lines.append(_row(lines, row, session_formats))

    dictionary = _sheet(book, "Column dictionary", DICTIONARY_WIDTHS, frozen=True)
    dictionary.append(_header(dictionary, ["sheet", "column", "meaning"]))
    for row in DICTIONARY:
        dictionary.append(list(row))
    out = tempfile.TemporaryFile()
    book.save(out)
    out.seek(0)
    return out
