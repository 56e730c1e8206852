"""A company that joined today sees what to do next, not a wall of zeros; periods, year close and
month lists start at the company's start; settings and year close live on their own page."""

from __future__ import annotations

import io
import re
from datetime import timedelta
from zoneinfo import ZoneInfo

from pypdf import PdfReader

from portal.core.clock import now_iso
from portal.core.periods import today_in

from .conftest import Row, oslo


def test_a_new_company_is_invited_to_invite_its_first_colleagues(company, manager_client):
    _, manager, _ = company("Fresh AS", employees=0, since=now_iso())
    client = manager_client(manager)
    page = client.get("/reports").get_data(as_text=True)
    assert re.search(r'<a class="button" href="/invitations/new">Invite your first colleagues</a>', page)
    assert 'id="figure-hours"' not in page and "0.00" not in page  # no wall of zeros
    assert "Last year" not in page and "Close a year" not in page

    settings = client.get("/reports/settings").get_data(as_text=True)
    assert 'id="no-years"' in settings and "Close this year" not in settings
    assert re.search(r"No year has ended since Fresh AS joined on \d+ \w{3} 20\d\d", settings)

    # This month has not ended: no filing PDF of it, and the page says which periods have one.
    refused = client.get("/reports/export.pdf")
    assert refused.status_code == 400 and "A filing PDF covers a whole month, quarter or year that has ended" in (
        refused.get_data(as_text=True)
    )
    last_month = today_in(ZoneInfo("Europe/Oslo")).replace(day=1) - timedelta(days=1)
    pdf = client.get(f"/reports/export.pdf?from={last_month:%Y-%m}-01&to={last_month}").get_data()
    reader = PdfReader(io.BytesIO(pdf))
    text = " ".join(reader.pages[0].extract_text().split())
    assert len(reader.pages) == 1 and "Nothing to file for this period" in text and "0.00" not in text


def test_months_before_the_first_session_are_not_listed(company, insert_sessions, manager_client):
    acme, manager, staff = company("Acme Ltd", employees=1)
    insert_sessions(
        [
            Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 60),
            Row("language", staff[0], acme, oslo("2025-05-06T18:00"), 45),
        ]
    )
    client = manager_client(manager)
    page = client.get("/reports?from=2025-01-01&to=2025-12-31&programme=all").get_data(as_text=True)
    rows = re.findall(r'<tr><th scope="row">(\w{3} 2025)</th>', page)
    assert rows[:3] == ["Mar 2025", "Apr 2025", "May 2025"] and rows[-1] == "Dec 2025"  # none before March
    assert ">Jan 2025<" not in page and ">Feb 2025<" not in page
    csv_text = client.get("/reports/export.csv?from=2025-01-01&to=2025-12-31&programme=all").get_data(as_text=True)
    assert "\nJan 2025," not in csv_text and "\nMar 2025," in csv_text


def test_a_period_without_sessions_says_so_instead_of_charts_and_downloads(company, insert_sessions, manager_client):
    acme, manager, staff = company("Acme Ltd", employees=1)
    insert_sessions([Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 60)])
    client = manager_client(manager)
    page = client.get("/reports?from=2025-06-01&to=2025-06-30&programme=all").get_data(as_text=True)
    assert 'id="empty-period"' in page and "PDF for filing" not in page and "chart-months" not in page


def test_the_report_names_report_emails_once_and_links_its_settings_page(company, insert_sessions, manager_client):
    acme, manager, staff = company("Acme Ltd", employees=1)
    insert_sessions([Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 60)])
    client = manager_client(manager)
    page = client.get("/reports?from=2025-01-01&to=2025-12-31&programme=all").get_data(as_text=True)
    assert page.count(">Report emails<") == 1  # the navigation's link only
    assert 'href="/reports/settings">Settings and year close</a>' in page
    assert 'name="hourly_cost"' not in page and "Close this year" not in page
    settings = client.get("/reports/settings").get_data(as_text=True)
    assert 'name="hourly_cost"' in settings and "Close 2025" in settings.replace('aria-label="Close 2025', "Close 2025")


def test_a_company_with_accounts_but_no_sessions_is_told_where_its_hours_come_from(company, manager_client):
    _, manager, _ = company("Quiet AS", employees=2, since=now_iso())
    page = manager_client(manager).get("/reports").get_data(as_text=True)
    assert "2 colleagues have an account" in page
    assert '<a class="button" href="/invitations/new">Invite more colleagues</a>' in page
