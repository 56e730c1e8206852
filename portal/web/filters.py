"""What every template may use: the email statuses that still move (pages show those as "on its
way"), the portal's time zone, whether the page shows a refused form, and TEEI's contact address."""

from __future__ import annotations

from flask import Flask

from portal.outbox.ground.statuses import UNSETTLED
from portal.web.forms import page_has_errors


def init_template_filters(app: Flask, settings) -> None:
    app.jinja_env.globals["unsettled_email_statuses"] = UNSETTLED
    app.jinja_env.globals["portal_zone_name"] = settings.portal_timezone
    app.jinja_env.globals["page_has_errors"] = page_has_errors
    # Where a person writes to TEEI (every page's footer, the accessibility statement, the privacy
    # notice): the inbox that answers partners and applicants.
    app.jinja_env.globals["contact_address"] = settings.sales_inbox
    # Dates, times and numbers, in the page's language: portal/web/i18n.py.
