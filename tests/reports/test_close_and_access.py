"""Closing a year freezes its report; corrections show as changes since close. Managers stay in their company."""

from __future__ import annotations

import re
from datetime import date

import sqlalchemy as sa

from portal.core.periods import Period
from portal.reports.operations import CloseError, close_year
from portal.reports.selection import ReportQuery
from tests.pages import csrf_from

from .conftest import OSLO, Row, oslo

YEAR = "from=2025-01-01&to=2025-12-31&programme=all"


def csrf(client, path="/reports"):
    return csrf_from(client.get(path).get_data(as_text=True))


def figure(page, name):
    return re.search(rf'id="figure-{name}">([^<]+)<', page).group(1)


def test_closing_a_year_freezes_its_report_and_shows_later_corrections(db, company, insert_sessions, manager_client):
    acme, manager, staff = company("Acme Ltd", employees=3)
    insert_sessions(
        [
            Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 60),
            Row("language", staff[1], acme, oslo("2025-09-09T18:00"), 90),
            Row("mentorship", staff[2], acme, oslo("2025-12-31T23:30"), 30),
        ]
    )
    client = manager_client(manager)
    token = csrf(client)
    response = client.post(
        "/reports/close",
        data={"period_start": "2025-01-01", "confirmed": "yes", "csrf_token": token},
        follow_redirects=True,
    )
    page = response.get_data(as_text=True)
    assert "2025 is closed" in page and "Filed figures." in page
    assert figure(page, "hours") == "3.00" and figure(page, "sessions") == "3"
    with db.read() as conn:
        snapshot_row = conn.execute(sa.text("SELECT report_id, closed_by FROM report_closures")).one()

    # A correction arrives after the close: one session cancelled, one late session added.
    with db.write() as conn:
        conn.execute(
            sa.text(
                "UPDATE attendance_sessions SET status = 'cancelled', received_at = '2099-01-01T00:00:00.000000Z' "
                "WHERE minutes = 90"
            )
        )
    insert_sessions(
        [Row("mentorship", staff[0], acme, oslo("2025-06-01T10:00"), 120)], received_at="2099-01-01T00:00:00.000000Z"
    )

    page = client.get(f"/reports?{YEAR}").get_data(as_text=True)
    assert figure(page, "hours") == "3.00" and figure(page, "sessions") == "3"  # the filed report never changes
    assert snapshot_row.report_id in page
    assert "Changes since close:" in page and "2 session records" in page
    assert "+0.50 hours" in page and "+0 sessions" in page  # -1.5 h +2 h; -1 +1 sessions
    assert "now 3.50 hours" in page
    csv_text = client.get(f"/reports/export.csv?{YEAR}").get_data(as_text=True)
    assert f"Report ID,{snapshot_row.report_id}" in csv_text and "Verified hours,3.0" in csv_text
    assert "2 records; +0.50 hours; +0 sessions" in csv_text

    # A year closes once; an unfinished year cannot close.
    again = client.post(
        "/reports/close",
        data={"period_start": "2025-01-01", "confirmed": "yes", "csrf_token": token},
        follow_redirects=True,
    ).get_data(as_text=True)
    assert "already closed" in again
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM report_closures")).scalar() == 1


def test_closing_asks_first_and_a_post_without_the_confirmation_changes_nothing(
    db, company, insert_sessions, manager_client
):
    acme, manager, staff = company("Acme Ltd", employees=1)
    insert_sessions([Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 60)])
    client = manager_client(manager)
    settings = client.get("/reports/settings").get_data(as_text=True)
    assert 'href="/reports/close?period_start=2025-01-01"' in settings, "the settings page links to the question"
    asked = client.get("/reports/close?period_start=2025-01-01").get_data(as_text=True)
    assert "Close 2025 for filing?" in asked and "Closing is final." in asked and "cannot be reopened" in asked
    assert 'name="confirmed" value="yes"' in asked and 'name="period_start" value="2025-01-01"' in asked
    token = csrf_from(asked)
    for data in ({"period_start": "2025-01-01"}, {"period_start": "2025-01-01", "confirmed": "no"}):
        answer = client.post("/reports/close", data={**data, "csrf_token": token})
        assert answer.status_code == 200 and "Close 2025 for filing?" in answer.get_data(as_text=True)
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM report_closures")).scalar() == 0, "nothing closed"
    done = client.post("/reports/close", data={"period_start": "2025-01-01", "confirmed": "yes", "csrf_token": token})
    assert done.status_code == 302
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM report_closures")).scalar() == 1


def test_a_year_that_has_not_ended_cannot_close(db, company):
    acme, _, staff = company("Acme Ltd", employees=1)
    period = Period(date(2026, 1, 1), date(2026, 12, 31), "2026")
    try:
        close_year(
            db,
            company_id=acme,
            actor_id=staff[0],
            period=period,
            today=date(2026, 12, 31),
            tz=OSLO,
            settings_snapshot={},
        )
    except CloseError as error:
        assert "has not ended" in str(error)
    else:
        raise AssertionError("closed an unfinished year")


def test_fiscal_year_setting_offers_a_fiscal_preset_and_close(company, insert_sessions, manager_client):
    acme, manager, staff = company("Acme Ltd", employees=1)
    insert_sessions([Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 60)])
    client = manager_client(manager)
    token = csrf(client)
    client.post(
        "/reports/settings",
        data={
            "fiscal_year_start_month": "4",
            "hourly_cost": "650,50",
            "currency": "nok",
            "company_time_percent": "80",
            "csrf_token": token,
        },
    )
    assert re.search(r"FY 20\d\d/\d\d", client.get("/reports").get_data(as_text=True))
    page = client.get("/reports/settings").get_data(as_text=True)  # the settings live on their own page
    assert 'value="650.50"' in page and 'value="NOK"' in page and re.search(r"Close FY 20\d\d/\d\d", page)
    refused = client.post(
        "/reports/settings",
        data={"fiscal_year_start_month": "13", "hourly_cost": "-3", "currency": "kr", "csrf_token": token},
    )
    bad = refused.get_data(as_text=True)
    assert refused.status_code == 400 and "<title>Error: Report settings" in bad
    assert "Choose one of the options offered." in bad and "Hourly cost: a positive amount" in bad
    assert "Currency: a three-letter code" in bad and "Share of hours in company time" in bad
    # What was typed stays to be corrected, and nothing was saved.
    assert re.search(r'<input[^>]*id="hourly_cost"[^>]*value="-3"', bad) and 'value="kr"' in bad
    assert 'value="650.50"' in client.get("/reports/settings").get_data(as_text=True)


def test_b4si_time_uses_the_hourly_cost_and_company_time_share(db, company, insert_sessions, manager_client):
    acme, manager, staff = company("Acme Ltd", employees=1)
    insert_sessions([Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 600)])  # 10 hours
    client = manager_client(manager)
    client.post(
        "/reports/settings",
        data={
            "fiscal_year_start_month": "1",
            "hourly_cost": "500",
            "currency": "NOK",
            "company_time_percent": "50",
            "csrf_token": csrf(client),
        },
    )
    page = client.get(f"/reports?{YEAR}").get_data(as_text=True)
    assert "5.00 hours in company time x 500.00 NOK = 2,500 NOK" in page  # 10 h x 50% x 500
    assert "5.00 in paid working time and 5.00 in own time" in page


def test_a_manager_never_sees_another_companys_figures(company, insert_sessions, manager_client):
    acme, manager, staff = company("Acme Ltd", employees=1)
    other, _, other_staff = company("Other Co", employees=1)
    insert_sessions(
        [
            Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 60),
            Row("language", other_staff[0], other, oslo("2025-03-04T18:00"), 600),
        ]
    )
    client = manager_client(manager)
    for extra in ("", f"&company_id={other}", f"&company={other}", "&company_id[]=2", f"&user_id={other_staff[0]}"):
        page = client.get(f"/reports?{YEAR}{extra}").get_data(as_text=True)
        assert figure(page, "hours") == "1.00" and "Other Volunteer" not in page
        for fmt in ("csv", "xlsx", "pdf"):
            body = client.get(f"/reports/export.{fmt}?{YEAR}{extra}").get_data()
            assert b"other.example" not in body and b"Other Volunteer" not in body
    assert client.get(f"/reports/volunteers/{other_staff[0]}").status_code == 404
    assert client.get(f"/reports/volunteers/{staff[0]}").status_code == 200


def test_employees_see_only_their_own_hours_and_get_a_certificate(company, insert_sessions, client, auth, db):
    acme, _, staff = company("Acme Ltd", employees=2)
    insert_sessions(
        [
            Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 90),
            Row("mentorship", staff[0], acme, oslo("2025-04-04T18:00"), 60, status="no_show"),
            Row("language", staff[1], acme, oslo("2025-03-04T18:00"), 600),
        ]
    )
    auth.login("vol0@acme.example")
    page = client.get("/me/hours").get_data(as_text=True)
    assert (
        "1 attended session · 1.50 hours" in page
        and 'No-show</span> <span class="visually-hidden">(not counted)' in page
    )
    assert client.get("/reports").status_code == 403
    response = client.get("/me/hours/certificate.pdf?from=01.01.2025&to=31.12.2025")
    assert response.status_code == 200 and response.mimetype == "application/pdf"
    from io import BytesIO

    from pypdf import PdfReader

    text = " ".join(" ".join(p.extract_text() for p in PdfReader(BytesIO(response.get_data())).pages).split())
    assert "Acme Volunteer 00" in text and "1.50 hours in 1 attended session " in text


def test_the_manager_lands_on_the_report(company, manager_client):
    _, manager, _ = company("Acme Ltd", employees=1)
    client = manager_client(manager)
    response = client.get("/", follow_redirects=True)
    assert "Volunteering report" in response.get_data(as_text=True)
    assert client.get("/company").headers["Location"].endswith("/reports")


def test_close_reads_figures_for_every_programme(db, company, insert_sessions):
    acme, _, staff = company("Acme Ltd", employees=2)
    insert_sessions(
        [
            Row("language", staff[0], acme, oslo("2024-03-04T18:00"), 60),
            Row("mentorship", staff[1], acme, oslo("2024-05-04T18:00"), 30),
        ]
    )
    close_year(
        db,
        company_id=acme,
        actor_id=staff[0],
        period=Period(date(2024, 1, 1), date(2024, 12, 31), "2024"),
        today=date(2025, 1, 2),
        tz=OSLO,
        settings_snapshot={"fiscal_year_start_month": 1},
    )
    from portal.reports.queries import closures

    (closure,) = closures(db, company_id=acme)
    assert closure.figures("mentorship").total.minutes == 30
    assert closure.figures("language").total.minutes == 60
    assert closure.figures("all").total.volunteers == 2
    assert ReportQuery(closure.period).programmes == ("language", "mentorship")
