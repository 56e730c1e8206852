"""What every template may use: the one way pages show stored times, and the email statuses that
still move (pages show those as "on its way")."""

from __future__ import annotations

from flask import Flask

from portal.core.clock import display_date, display_time
from portal.outbox.statuses import UNSETTLED


def init_template_filters(app: Flask) -> None:
    app.jinja_env.globals["unsettled_email_statuses"] = UNSETTLED
    # "3 Oct 2026" and "3 Oct 2026, 14:05 UTC".
    app.jinja_env.filters["date_only"] = display_date
    app.jinja_env.filters["date_time"] = display_time
