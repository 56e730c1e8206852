"""Report periods close at local midnight in Europe/Oslo, on both sides of each daylight-saving change.

The expected instants are written out by hand from the calendar (CET is UTC+1, CEST UTC+2; summer
time in 2026 runs from 29 March to 25 October), not derived from the code under test.
"""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from portal.core.periods import (
    PeriodKeyError,
    closed_between,
    closes_at,
    last_closed,
    parse_period_key,
    period_key,
)

OSLO = ZoneInfo("Europe/Oslo")


def utc(text):
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("key", "start", "end", "closes"),
    [
        ("2026-02", "2026-02-01", "2026-02-28", "2026-02-28T23:00:00"),  # winter on both sides
        ("2026-03", "2026-03-01", "2026-03-31", "2026-03-31T22:00:00"),  # opens in CET, closes in CEST
        ("2026-10", "2026-10-01", "2026-10-31", "2026-10-31T23:00:00"),  # opens in CEST, closes in CET
        ("2026-Q1", "2026-01-01", "2026-03-31", "2026-03-31T22:00:00"),
        ("2026-Q3", "2026-07-01", "2026-09-30", "2026-09-30T22:00:00"),
        ("2026-Q4", "2026-10-01", "2026-12-31", "2026-12-31T23:00:00"),
    ],
)
def test_periods_close_at_local_midnight_across_daylight_saving(key, start, end, closes):
    period = parse_period_key(key)
    assert (period.start.isoformat(), period.end.isoformat()) == (start, end)
    assert closes_at(period, OSLO) == utc(closes)
    assert period_key(period) == key


def test_march_is_due_only_from_local_midnight_not_utc_midnight():
    # 31 March, 23:59 in Oslo (21:59 UTC): March is still open, February is the last closed month.
    assert period_key(last_closed("monthly", utc("2026-03-31T21:59:59"), OSLO)) == "2026-02"
    assert period_key(last_closed("monthly", utc("2026-03-31T22:00:00"), OSLO)) == "2026-03"
    assert period_key(last_closed("quarterly", utc("2026-03-31T22:00:00"), OSLO)) == "2026-Q1"


def test_october_is_due_an_hour_later_in_utc_than_march():
    assert period_key(last_closed("monthly", utc("2026-10-31T22:30:00"), OSLO)) == "2026-09"
    assert period_key(last_closed("monthly", utc("2026-10-31T23:00:00"), OSLO)) == "2026-10"


def test_catch_up_lists_each_period_closed_since_once_oldest_first():
    since, now = utc("2026-08-10T08:00:00"), utc("2026-11-15T12:00:00")
    assert [period_key(p) for p in closed_between("monthly", since, now, OSLO)] == ["2026-08", "2026-09", "2026-10"]
    assert [period_key(p) for p in closed_between("quarterly", since, now, OSLO)] == ["2026-Q3"]
    # Nothing closed in between: nothing due.
    assert closed_between("monthly", utc("2026-11-01T00:00:00"), now, OSLO) == []


@pytest.mark.parametrize("raw", ["2026-13", "2026-Q5", "26-11", "2026-1", "November", ""])
def test_a_badly_written_period_is_refused_with_the_format(raw):
    with pytest.raises(PeriodKeyError, match="2026-11"):
        parse_period_key(raw)
