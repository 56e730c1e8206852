from datetime import UTC
from zoneinfo import ZoneInfo

from portal.core.clock import display_date, display_time

OSLO = ZoneInfo("Europe/Oslo")


def test_times_people_read_are_in_the_zone_they_name():
    # Winter (UTC+1) and summer (UTC+2): the same stored form, read in Oslo, the zone named each time.
    assert display_time("2026-12-04T23:30:00.000000Z", OSLO) == "5 Dec 2026, 00:30 CET"
    assert display_time("2026-07-01T10:05:00.000000Z", OSLO) == "1 Jul 2026, 12:05 CEST"
    assert display_time("2026-07-01T10:05:00.000000Z", UTC) == "1 Jul 2026, 10:05 UTC"


def test_a_date_is_the_local_day_not_the_utc_one():
    assert display_date("2026-12-04T23:30:00.000000Z", OSLO) == "5 Dec 2026"
    assert display_date("2026-12-04T23:30:00.000000Z", UTC) == "4 Dec 2026"


def test_a_value_that_is_not_a_stored_time_is_shown_as_it_is():
    assert display_time("yesterday", OSLO) == "yesterday"
