"""Periods in Europe/Oslo, and the query string: bad input is a clear message, never a 500."""

from __future__ import annotations

from datetime import date

import pytest

from portal.core.periods import Period, closable_years, fiscal_year_containing, presets
from portal.reports.forms import QueryErrors, parse_report_query
from portal.reports.selection import ReportQuery

from .conftest import OSLO


def test_utc_bounds_follow_oslo_midnight_in_winter_and_summer():
    assert Period(date(2025, 1, 1), date(2025, 1, 31), "").utc_bounds(OSLO) == (
        "2024-12-31T23:00:00.000000Z",
        "2025-01-31T23:00:00.000000Z",
    )
    assert Period(date(2025, 7, 1), date(2025, 7, 31), "").utc_bounds(OSLO) == (
        "2025-06-30T22:00:00.000000Z",
        "2025-07-31T22:00:00.000000Z",
    )
    # The month that changes to summer time is one hour short.
    assert Period(date(2025, 3, 1), date(2025, 3, 31), "").utc_bounds(OSLO) == (
        "2025-02-28T23:00:00.000000Z",
        "2025-03-31T22:00:00.000000Z",
    )


def test_presets_on_a_given_day():
    found = {p.kind: (p.start, p.end) for p in presets(date(2026, 11, 15), fiscal_start_month=4)}
    assert found["this_month"] == (date(2026, 11, 1), date(2026, 11, 15))
    assert found["last_month"] == (date(2026, 10, 1), date(2026, 10, 31))
    assert found["this_quarter"] == (date(2026, 10, 1), date(2026, 11, 15))
    assert found["last_quarter"] == (date(2026, 7, 1), date(2026, 9, 30))
    assert found["year_to_date"] == (date(2026, 1, 1), date(2026, 11, 15))
    assert found["last_year"] == (date(2025, 1, 1), date(2025, 12, 31))
    assert found["fiscal_year_to_date"] == (date(2026, 4, 1), date(2026, 11, 15))
    assert found["last_fiscal_year"] == (date(2025, 4, 1), date(2026, 3, 31))
    january = {p.kind: (p.start, p.end) for p in presets(date(2026, 1, 10))}
    assert january["last_month"] == (date(2025, 12, 1), date(2025, 12, 31))
    assert january["last_quarter"] == (date(2025, 10, 1), date(2025, 12, 31))


def test_fiscal_years_and_closable_years():
    assert (fiscal_year_containing(date(2026, 2, 1), 7).start, fiscal_year_containing(date(2026, 2, 1), 7).end) == (
        date(2025, 7, 1),
        date(2026, 6, 30),
    )
    years = closable_years(date(2026, 5, 1), 7)
    assert all(p.end < date(2026, 5, 1) for p in years)
    assert {p.label for p in years} >= {"2025", "2024", "FY 2024/25"}


def test_months_are_clipped_to_the_period():
    months = Period(date(2025, 1, 15), date(2025, 3, 10), "").months()
    assert [(m.start, m.end) for m in months] == [
        (date(2025, 1, 15), date(2025, 1, 31)),
        (date(2025, 2, 1), date(2025, 2, 28)),
        (date(2025, 3, 1), date(2025, 3, 10)),
    ]


TODAY = date(2026, 11, 15)


@pytest.mark.parametrize(
    "args, message",
    [
        ({"from": "2025-02-30", "to": "2025-03-31"}, "2025-02-30 does not exist"),
        ({"from": "2025-13-01", "to": "2025-12-31"}, "does not exist"),
        ({"from": "31/01/2025", "to": "2025-03-31"}, "day first or year first"),
        ({"from": "2025-05-01", "to": "2025-04-30"}, "is before"),
        ({"from": "2019-01-01", "to": "2024-01-01"}, "at most 5 years"),
        ({"from": "2025-01-01"}, "both dates"),
        ({"from": "9999-01-01", "to": "9999-01-02"}, "between 2000 and 2100"),
        ({"from": "0001-01-01", "to": "0001-01-31"}, "between 2000 and 2100"),
        ({"programme": "cooking"}, "Programme must be one of"),
    ],
)
def test_bad_input_gives_a_message(args, message):
    result = parse_report_query(args, TODAY)
    assert isinstance(result, QueryErrors)
    assert any(message in text for text in result.messages), result.messages


def test_dates_are_read_day_first_as_well_as_year_first():
    day_first = parse_report_query({"from": "1.3.2026", "to": "31.03.2026"}, TODAY)
    year_first = parse_report_query({"from": "2026-03-01", "to": "2026-03-31"}, TODAY)
    assert (day_first.period.start, day_first.period.end) == (year_first.period.start, year_first.period.end)
    assert (day_first.period.start, day_first.period.end) == (date(2026, 3, 1), date(2026, 3, 31))
    assert isinstance(parse_report_query({"from": "31.02.2026", "to": "2026-03-31"}, TODAY), QueryErrors)


def test_five_years_exactly_is_allowed_and_the_default_is_year_to_date():
    assert isinstance(parse_report_query({"from": "2019-01-01", "to": "2023-12-31"}, TODAY), ReportQuery)
    default = parse_report_query({}, TODAY)
    assert (default.period.start, default.period.end, default.programme) == (date(2026, 1, 1), TODAY, "all")


@pytest.mark.parametrize(
    "query, message",
    [
        ("from=2025-02-30&to=2025-03-31", "2025-02-30 does not exist in the calendar"),
        ("from=2025-05-01&to=2025-04-30", "is before"),
        ("from=2010-01-01&to=2025-01-01", "at most 5 years"),
        ("programme=knitting", "Programme must be one of"),
        ("from=%00%ff&to=x", "day first or year first"),
        ("from=9999-01-01&to=9999-01-02", "must fall between 2000 and 2100"),
        ("from=0001-01-01&to=0001-01-31", "must fall between 2000 and 2100"),
    ],
)
@pytest.mark.parametrize("path", ["/reports", "/reports/export.csv", "/reports/export.xlsx", "/reports/export.pdf"])
def test_bad_input_is_a_400_page_with_the_message(company, manager_client, path, query, message):
    _, manager, _ = company("Acme Ltd", employees=1)
    response = manager_client(manager).get(f"{path}?{query}")
    assert response.status_code == 400
    assert response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert "This report cannot be shown" in page and message in page
