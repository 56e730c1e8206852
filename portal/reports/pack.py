"""The filing pack (issue 50, item 3): a filing as data points that programs read, in JSON and CSV.

The same filing as its PDF: made from the filed record (filing.py: its figures, its mask, its
report ID), never from live figures. One data point per disclosure and measure (which measures
each framework's disclosure takes is crosswalk.DATA_POINTS), then the filing's own table, by
programme and by month, exactly as the PDF prints it. A figure the filing hides has no value here
either: `null`, with the masking code `hidden` and the PDF's words for it. Values derived from a
hidden total (company time, its cost) are hidden with it, as the PDF's crosswalk hides them.

One machine format in every language: English codes and words, ISO dates, numbers as JSON
numbers (hours to 0.01, a rate to 0.1) and, in the CSV, with a dot. The JSON is written a data
point at a time (a generator), so a pack never sits whole in memory. Its JSON Schema is
docs/filing-pack.schema.json; docs/filing-pack.md describes it.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from portal.core.i18n import ENGLISH, translate
from portal.reports.crosswalk import DATA_POINTS
from portal.reports.disclosure import ALL, DOMINANCE, THRESHOLD
from portal.reports.hours import hours_of
from portal.reports.masked import View, view_of
from portal.reports.pdf import HIDDEN_NOTE
from portal.reports.report import Report

SCHEMA_ID = "https://teei.example/schemas/filing-pack/1.json"
VERSION = 1
TABLE = "TEEI filing table"  # the filing's own figures by programme and month, as its PDF prints them
# Session records that arrived after an earlier filing, for months it printed (which this filing
# prints as first filed): its PDF's "Corrections", a group like any other (filing.FiledCorrections).
CORRECTIONS = "TEEI corrections"

# Masking codes: a code for programs, the words for people (the PDF's, in English).
SHOWN, HIDDEN, NOT_SET = "shown", "hidden", "not_set"
NOT_SET_TEXT = (
    "not set: the filing has no value for it (time is valued only with an hourly cost in the report settings)"
)


@dataclass(frozen=True)
class DataPoint:
    disclosure: str
    measure: str
    programme: str  # "all", or one programme
    start: str  # the data point's period, local dates (a month of the filing, or all of it)
    end: str
    value: Decimal | int | float | None
    unit: str
    masking: str

    def to_dict(self, report_id: str) -> dict:
        return {
            "disclosure": self.disclosure,
            "measure": self.measure,
            "programme": self.programme,
            "period": {"start": self.start, "end": self.end},
            "value": None if self.value is None else _number(self.value),
            "unit": self.unit,
            "report_id": report_id,
            "masking": {"code": self.masking, "text": masking_text(self.masking)},
        }


def masking_text(code: str) -> str:
    if code == HIDDEN:
        return translate(ENGLISH, HIDDEN_NOTE, share=DOMINANCE)
    return NOT_SET_TEXT if code == NOT_SET else ""


def _number(value) -> int | float:
    """A JSON number: whole numbers as integers, hours and rates as their shown decimals."""
    if isinstance(value, int) or (isinstance(value, Decimal) and value.as_tuple().exponent >= 0):
        return int(value)  # counts, and money in whole units
    return float(value)


def _totals(report: Report, view: View) -> dict[str, tuple[object, str, bool]]:
    """The period's measures: (value, unit, hidden), hidden exactly as the PDF hides them."""
    f = report.figures
    total_hidden = view.total_hidden()
    money = report.b4si_time_value
    return {
        "volunteer_hours": (f.total.hours, "h", total_hidden),
        "sessions": (f.total.sessions, "sessions", total_hidden),
        "volunteers": (f.total.volunteers, "persons", view.count_hidden()),
        "participation_rate": (f.participation, "%", view.participation_hidden()),
        # Shares and money from the total as printed: hidden with it (crosswalk's hide_total).
        "company_time_hours": (report.company_time_hours, "h", total_hidden),
        "own_time_hours": (report.own_time_hours, "h", total_hidden),
        "community_investment_time": (money, report.settings.currency, total_hidden),
    }


def data_points(report: Report) -> Iterator[DataPoint]:
    """Every data point of a filed report (its `mask` set), disclosures first, then its table."""
    view = view_of(report)
    f = report.figures
    period = report.query.period
    start, end = period.start.isoformat(), period.end.isoformat()
    totals = _totals(report, view)

    def point(disclosure, measure, programme, first, last, value, unit, hidden) -> DataPoint:
        if hidden:
            return DataPoint(disclosure, measure, programme, first, last, None, unit, HIDDEN)
        if value is None:
            return DataPoint(disclosure, measure, programme, first, last, None, unit, NOT_SET)
        return DataPoint(disclosure, measure, programme, first, last, value, unit, SHOWN)

    for disclosure, measures in DATA_POINTS.items():
        for measure in measures:
            yield point(disclosure, measure, ALL, start, end, *totals[measure])
    # The filing's table: by programme over the period, as the PDF's "By programme" prints it ...
    for p, cell in f.programmes.items():
        hidden = view.programme_hidden(p)
        count_hidden = hidden or view.count_hidden(p)
        yield point(TABLE, "volunteer_hours", p, start, end, cell.hours, "h", hidden)
        yield point(TABLE, "sessions", p, start, end, cell.sessions, "sessions", hidden)
        yield point(TABLE, "volunteers", p, start, end, cell.volunteers, "persons", count_hidden)
        rate = f.participation_of(cell)
        yield point(TABLE, "participation_rate", p, start, end, rate, "%", count_hidden or view.participation_hidden())
    for measure in ("volunteer_hours", "sessions", "volunteers", "participation_rate"):
        yield point(TABLE, measure, ALL, start, end, *totals[measure])
    yield point(TABLE, "employees", ALL, start, end, f.employees, "persons", view.participation_hidden())
    # ... and by month, as its month table prints it (every month of the period).
    for month in f.months:
        key = view.month_key(month)
        for p, cell in month.programmes.items():
            yield point(
                TABLE, "volunteer_hours", p, month.start, month.end, cell.hours, "h", view.mask.hides(key, key, p)
            )
        hidden = view.mask.hides(key, key)
        yield point(TABLE, "volunteer_hours", ALL, month.start, month.end, month.total.hours, "h", hidden)
        yield point(TABLE, "sessions", ALL, month.start, month.end, month.total.sessions, "sessions", hidden)
        count_hidden = view.mask.hides_count(key, key)
        yield point(TABLE, "volunteers", ALL, month.start, month.end, month.total.volunteers, "persons", count_hidden)
    # Late records the figures above do not hold: add them to the filed figures (signed: a record may
    # have been cancelled). Sized only for 5 colleagues or more, as the PDF states them.
    late = report.corrections
    if late is not None:
        hidden = not late.shown
        yield point(CORRECTIONS, "session_records", ALL, start, end, late.records, "records", hidden)
        yield point(CORRECTIONS, "volunteers", ALL, start, end, late.people, "persons", hidden)
        yield point(CORRECTIONS, "volunteer_hours", ALL, start, end, hours_of(late.minutes), "h", hidden)
        yield point(CORRECTIONS, "sessions", ALL, start, end, late.sessions, "sessions", hidden)


def header(report: Report, verify_url: str) -> dict:
    """What the whole pack is: the filing, its company and period, and how it hides."""
    period = report.query.period
    return {
        "$schema": SCHEMA_ID,
        "version": VERSION,
        "report_id": report.report_id,
        "verify_url": verify_url,
        "company": report.company_name,
        "period": {"start": period.start.isoformat(), "end": period.end.isoformat(), "kind": period.kind},
        "time_zone": str(report.tz),
        "as_of": report.as_of,
        "currency": report.settings.currency,
        "company_time_percent": report.settings.company_time_percent,
        "masking_rule": {"threshold": THRESHOLD, "dominance_percent": DOMINANCE, "text": masking_text(HIDDEN)},
    }


def json_chunks(report: Report, verify_url: str) -> Iterator[str]:
    """The pack as JSON, a data point at a time: the header's fields, then "data_points": [...]."""
    head = json.dumps(header(report, verify_url), ensure_ascii=False, indent=1)
    yield head[:-2] + ',\n "data_points": ['  # the header object, left open
    for index, found in enumerate(data_points(report)):
        yield ("\n  " if index == 0 else ",\n  ") + json.dumps(found.to_dict(report.report_id), ensure_ascii=False)
    yield "\n ]\n}\n"


CSV_COLUMNS = [
    "report_id",
    "disclosure",
    "measure",
    "programme",
    "period_start",
    "period_end",
    "value",
    "unit",
    "masking_code",
    "masking_text",
]


def csv_lines(report: Report) -> Iterator[str]:
    """The pack's data points as CSV: one header row, one row a data point; an empty value where hidden."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for found in data_points(report):
        value = found.value
        writer.writerow(
            [
                report.report_id,
                found.disclosure,
                found.measure,
                found.programme,
                found.start,
                found.end,
                "" if value is None else str(value),
                found.unit,
                found.masking,
                masking_text(found.masking),
            ]
        )
    # No BOM: the pack is for programs (the report's working-copy CSV keeps one for spreadsheets).
    yield buffer.getvalue()
