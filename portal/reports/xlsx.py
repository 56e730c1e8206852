"""The XLSX working copy: the rows of exports.py as typed cells a spreadsheet can sort and sum.

Written by openpyxl in write-only mode to a temporary file (each row goes to disk as it is
appended), so 100,000 sessions take constant memory. Dates and times are real date cells, hours
are numbers with two decimals, each sheet's header row is bold, filled and frozen, and columns
have widths, all set before the first row as write-only mode requires.

For people, in their language: sheet names, section titles, column headers and the header block's
keys are translated here (the rows of exports.py carry the English machine names the CSV keeps).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from datetime import date, datetime

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font, PatternFill

from portal.core.clock import parse
from portal.core.i18n import ENGLISH, N_, translate
from portal.reports.exports import (
    BY_MONTH,
    BY_PROGRAMME,
    PERIOD_FROM,
    PERIOD_TO,
    SESSION_COLUMNS,
    SESSIONS,
    SUMMARY,
    VERIFIED_HOURS,
    VOLUNTEERS,
    column_title,
    dictionary_rows,
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
REPORT_SHEET, DICTIONARY_SHEET = N_("Report"), N_("Column dictionary")


def _sheet(book: Workbook, title: str, widths: tuple[int, ...], *, frozen: bool):
    sheet = book.create_sheet(title)
    for index, width in enumerate(widths):
        sheet.column_dimensions[chr(ord("A") + index)].width = width
    if frozen:
        sheet.freeze_panes = "A2"
    return sheet


def _header(sheet, names: list, language: str) -> list:
    """A header row: machine column names headed in `language`."""
    cells = []
    for name in names:
        cell = WriteOnlyCell(sheet, value=column_title(name, language))
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


def write_xlsx(report: Report, sessions: Iterable[SessionLine], language: str = ENGLISH):
    """The XLSX in a temporary file (rewound), in `language`."""

    def _(message: str) -> str:
        return translate(language, message)

    book = Workbook(write_only=True)
    sheet = _sheet(book, _(REPORT_SHEET), REPORT_WIDTHS, frozen=False)
    for index, row in enumerate(header_rows(report, language)):
        if index == 0:
            title = WriteOnlyCell(sheet, value=_(row[0]))
            title.font = TITLE_FONT
            sheet.append([title])
        elif row[0] in (PERIOD_FROM, PERIOD_TO):
            sheet.append([_(row[0]), _typed(sheet, date.fromisoformat(row[1]), DATE_FORMAT)])
        else:
            sheet.append(xlsx_safe(sheet, [_(row[0]), *row[1:]]))
    month_formats = {1: DATE_FORMAT, 2: DATE_FORMAT, 3: HOURS_FORMAT}
    month_formats |= {7 + i: HOURS_FORMAT for i in range(len(report.figures.programmes))}
    for title, rows, formats in (
        (SUMMARY, summary_rows(report), {}),
        (BY_PROGRAMME, programme_rows(report), {1: HOURS_FORMAT}),
        (BY_MONTH, month_rows(report, language), month_formats),
    ):
        sheet.append([])
        sheet.append([_typed(sheet, _(title), None)])
        sheet.append(_header(sheet, rows[0], language))
        for row in rows[1:]:
            if title == SUMMARY and row[0] == VERIFIED_HOURS:
                sheet.append([_(row[0]), _typed(sheet, row[1], HOURS_FORMAT)])
            elif title == SUMMARY:
                sheet.append(_row(sheet, [_(row[0]), *row[1:]], formats))
            elif title == BY_MONTH:
                row = [row[0], date.fromisoformat(row[1]), date.fromisoformat(row[2]), *row[3:]]
                sheet.append(_row(sheet, row, formats))
            else:
                sheet.append(_row(sheet, row, formats))

    people = _sheet(book, _(VOLUNTEERS), VOLUNTEER_WIDTHS, frozen=True)
    rows = volunteer_rows(report)
    people.append(_header(people, rows[0], language))
    for row in rows[1:]:
        people.append(_row(people, row, {4: HOURS_FORMAT}))

    lines = _sheet(book, _(SESSIONS), SESSION_WIDTHS, frozen=True)
    lines.append(_header(lines, SESSION_COLUMNS, language))
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

    dictionary = _sheet(book, _(DICTIONARY_SHEET), DICTIONARY_WIDTHS, frozen=True)
    dictionary.append(_header(dictionary, ["sheet", "column", "meaning"], language))
    for row in dictionary_rows(language, machine=False):
        dictionary.append(list(row))
    out = tempfile.TemporaryFile()
    book.save(out)
    out.seek(0)
    return out
