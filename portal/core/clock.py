"""Timestamps as fixed-width UTC ISO strings, so SQL compares them as text in time order."""

from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache

FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_WIDTH = len("2026-01-01T00:00:00.000000Z")


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        # astimezone would take a naive time as this machine's local time: refuse it instead.
        raise ValueError("a time without a time zone; pass an aware datetime (clock.utcnow())")
    return _iso_utc(moment)


@lru_cache(maxsize=256)
def _iso_utc(moment: datetime) -> str:
    # Remembered: a batch stamps its hundred emails with the same instant, twice each, and
    # strftime costs ten times a lookup. Equal aware datetimes are the same instant, the same text.
    return moment.astimezone(UTC).strftime(FORMAT)


def now_iso() -> str:
    return iso(utcnow())


def iso_in(seconds: float, start: datetime | None = None) -> str:
    return iso((start or utcnow()) + timedelta(seconds=seconds))


def parse(value: str) -> datetime:
    if len(value) == _WIDTH and value[10] == "T" and value[-1] == "Z":
        # Our own fixed-width times (most calls, some on every email): the C parser, ~20x faster.
        return datetime.fromisoformat(value)
    return datetime.strptime(value, FORMAT).replace(tzinfo=UTC)


def display_time(value: str, zone: tzinfo = UTC) -> str:
    """A stored UTC timestamp as people read it, in `zone` with the zone named: 3 Oct 2026, 16:05 CEST.

    Pages pass the portal's zone (the `date_time` filter); UTC stays only where an operator compares
    times with the provider's or a log's."""
    return _display(value, zone, "{day} {moment:%b %Y, %H:%M} {zone_name}")


def display_date(value: str, zone: tzinfo = UTC) -> str:
    """A stored UTC timestamp as the date people read in `zone` (23:30 UTC on the 2nd is the 3rd in
    Oslo), the one date format of every page: 3 Oct 2026."""
    return _display(value, zone, "{day} {moment:%b %Y}")


def _display(value: str, zone: tzinfo, pattern: str) -> str:
    try:
        moment = parse(value).astimezone(zone)
    except ValueError:
        return value  # not one of our timestamps: shown as stored rather than failing the page
    return pattern.format(day=moment.day, moment=moment, zone_name=moment.tzname())
