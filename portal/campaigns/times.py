"""Campaign times as an admin reads and types them: in the portal's zone (PORTAL_TIMEZONE), named.

Stored times stay fixed-width UTC (portal.core.clock); only what a person reads or types is local.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from portal.core import clock


def in_zone(moment: datetime, zone: tzinfo) -> str:
    """5 Dec 2026, 00:30 CET: the zone's own abbreviation, which changes with summer time."""
    local = moment.astimezone(zone)
    return f"{local.day} {local:%b %Y, %H:%M} {local.tzname()}"


def stored_in_zone(value: str | None, zone: tzinfo) -> str:
    """A stored UTC timestamp in the zone; empty stays empty, anything else is shown as stored."""
    if not value:
        return ""
    try:
        return in_zone(clock.parse(value), zone)
    except ValueError:
        return value


def local_input(moment: datetime, zone: tzinfo) -> str:
    """The value a datetime-local input shows for `moment`: the zone's wall-clock time, no offset."""
    return moment.astimezone(zone).strftime("%Y-%m-%dT%H:%M")
