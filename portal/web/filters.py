"""What every template may use: the one way pages show stored times, and the email statuses that
still move (pages show those as "on its way")."""

from __future__ import annotations

from flask import Flask

from portal.core.clock import display_date, display_time
from portal.core.periods import report_timezone
from portal.outbox.statuses import UNSETTLED


def init_template_filters(app: Flask, settings) -> None:
    zone = report_timezone(settings)
    app.jinja_env.globals["unsettled_email_statuses"] = UNSETTLED
    app.jinja_env.globals["portal_zone_name"] = settings.portal_timezone
    # Every time a person reads is in the portal's zone, named: "3 Oct 2026" and "3 Oct 2026, 16:05 CEST".
    app.jinja_env.filters["date_only"] = lambda value: display_date(value, zone)
    app.jinja_env.filters["date_time"] = lambda value: display_time(value, zone)
    # A local day (a date, not a stored time): "Sat 5 Dec 2026".
    app.jinja_env.filters["format_day"] = lambda day: f"{day:%a} {day.day} {day:%b %Y}"
