"""A manager picks last quarter, sees the chart, downloads CSV, XLSX and PDF, and each file carries the figures."""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from openpyxl import load_workbook
from playwright.sync_api import expect
from pypdf import PdfReader

from e2e.test_people import snapshot_widths
from portal.auth.operations import create_user
from portal.core.clock import iso
from portal.core.periods import presets
from portal.seed import DEMO_PASSWORD, seed_demo
from tests.reports.conftest import shown_hours

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
MANAGER = "manager@northwind.example"
OSLO = ZoneInfo("Europe/Oslo")


def add_last_quarter_sessions(db) -> tuple[int, int, int]:
    """Seven colleagues with sessions last quarter; returns (minutes, sessions, volunteers) computed here."""
    quarter = next(p for p in presets(datetime.now(OSLO).date()) if p.kind == "last_quarter")
    for n in range(7):
        create_user(
            db,
            email=f"colleague{n}@northwind.example",
            password=DEMO_PASSWORD,
            role="employee",
            company="Northwind Logistics",
            name=f"Colleague {n}",
        )
    minutes = []
    with db.write() as conn:
        people = conn.execute(sa.text("SELECT id, email, company_id FROM users WHERE email LIKE 'colleague%'")).all()
        for index, (user_id, email, company_id) in enumerate(people):
            for week in range(index + 1):
                day = quarter.start + timedelta(days=7 * week + index)
                held = datetime.combine(day, time(18, 0), tzinfo=OSLO)
                length = 90 if index % 2 else 60
                minutes.append(length)
                conn.execute(
                    sa.text(
                        "INSERT INTO attendance_sessions (platform, session_id, volunteer_email, user_id, company_id, "
                        "held_at, minutes, status, updated_at, received_at, source) VALUES (:p, :s, :e, :u, :c, :h, :m, "
                        "'attended', :h, :h, 'api')"
                    ),
                    {
                        "p": "language" if index < 4 else "mentorship",
                        "s": f"e2e-{user_id}-{week}",
                        "e": email,
                        "u": user_id,
                        "c": company_id,
                        "h": iso(held),
                        "m": length,
                    },
                )
    return sum(minutes), len(minutes), len(people)


def test_manager_downloads_last_quarter_in_three_formats(pages, page, stack):
    minutes, sessions, volunteers = add_last_quarter_sessions(stack.db)
    hours = shown_hours(minutes)
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    expect(page.get_by_role("heading", level=1)).to_have_text("Volunteering report")
    page.get_by_role("link", name="Last quarter", exact=True).click()
    expect(page.get_by_role("link", name="Last quarter", exact=True)).to_have_attribute("aria-current", "true")

    chart = page.get_by_role("img", name=re.compile("Verified hours by month"))
    expect(chart).to_be_visible()
    assert chart.locator("rect.bar").count() == 3  # one bar per month of the quarter
    expect(page.locator("#figure-hours")).to_have_text(hours)
    expect(page.locator("#figure-sessions")).to_have_text(str(sessions))
    expect(page.locator("#figure-volunteers")).to_have_text(str(volunteers))

    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=str(ARTIFACTS / "reports-1280.png"), full_page=True)

    files = {}
    for name, label in (("csv", "CSV"), ("xlsx", "Excel (XLSX)"), ("pdf", "PDF for filing")):
        with page.expect_download() as download:
            page.get_by_role("link", name=label, exact=True).click()
        files[name] = open(download.value.path(), "rb").read()
        assert download.value.suggested_filename.endswith(f".{name}")

    rows = list(csv.reader(io.StringIO(files["csv"].decode("utf-8-sig"))))
    summary = dict(r[:2] for r in rows[rows.index(["## Summary"]) + 2 :][:6])
    assert summary["Verified hours"] == hours.replace(",", "") and summary["Sessions"] == str(sessions)
    assert summary["Active volunteers"] == str(volunteers)

    book = load_workbook(io.BytesIO(files["xlsx"]), read_only=True)
    sheet = {r[0]: r[1] for r in book["Report"].iter_rows(values_only=True) if len(r) > 1 and r[0]}
    assert f"{sheet['Verified hours']:,.2f}" == hours and sheet["Sessions"] == sessions
    assert sum(1 for _ in book["Sessions"].iter_rows(min_row=2)) == sessions

    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(files["pdf"])).pages).split())
    assert f"{hours} Verified hours" in text and f"{volunteers} Active volunteers" in text
    assert "IRIS+ OI8429" in text and "Colleague 0" not in text
    (ARTIFACTS / "report.pdf").write_bytes(files["pdf"])

    # On a phone, the report fits: charts scale, tables scroll inside their cards.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(ARTIFACTS / "reports-390.png"), full_page=True)


def test_the_demo_year_reads_as_a_report_at_1280_and_on_a_phone(pages, page, stack):
    seed_demo(stack.db, secret_key=stack.secret_key, history=True)
    today = datetime.now(OSLO).date()
    start = today.replace(year=today.year - 1) + timedelta(days=1)
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.goto(f"{stack.url}/reports?from={start}&to={today}&programme=all")
    expect(page.locator("#figure-volunteers")).to_have_text(re.compile(r"^1\d$"))
    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    months = page.locator("#months-title").locator("xpath=..")
    expect(months.locator(".wide-only table")).to_be_visible()  # chart and table side by side
    page.screenshot(path=str(ARTIFACTS / "reports-year-1280.png"), full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # Each figure once on a phone: the month chart with its table folded away, the programme table alone.
    expect(months.get_by_role("img", name=re.compile("Verified hours by month"))).to_be_visible()
    expect(months.locator(".wide-only table")).to_be_hidden()
    expect(months.locator("details.phone-only")).to_be_visible()
    expect(months.locator("details.phone-only table")).to_be_hidden()
    expect(page.get_by_role("img", name=re.compile("Verified hours by programme"))).to_be_hidden()
    expect(page.locator("#by-programme")).to_be_visible()
    height = page.evaluate("document.documentElement.scrollHeight")
    print(f"report height at 390 px, a year of the demo: {height} px")
    # Issue 47: the programme and volunteer tables are cards on a phone (no sideways scrolling), which
    # costs height: 4,838 px measured for the demo year (3,568 px when the tables scrolled sideways).
    # Issue 50 adds the year before (a four-column table that fits a phone): 5,312 px measured; with
    # the drill-down's hint and the line on which hours count, 5,697 px.
    assert height < 6000
    page.screenshot(path=str(ARTIFACTS / "reports-year-390.png"), full_page=True)

    page.get_by_role("link", name="Settings and year close").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Report settings")
    expect(page.get_by_role("link", name=re.compile(r"^Close "))).not_to_have_count(0)
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(ARTIFACTS / f"report-settings-{width}.png"), full_page=True)


def test_a_new_company_is_shown_what_to_do_first(pages, page, stack):
    pages.sign_in(MANAGER, DEMO_PASSWORD)  # the browser tests' demo company: 3 accounts, no sessions yet
    expect(page.get_by_text("3 colleagues have an account")).to_be_visible()
    invite = page.get_by_role("link", name="Invite more colleagues")
    expect(invite).to_be_visible()
    expect(page.locator("#figure-hours")).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"reports-new-company-{width}.png"), full_page=True)
    invite.click()
    expect(page).to_have_url(re.compile(r"/invitations/new$"))


def test_a_volunteers_page_opened_from_the_report_says_its_period(pages, page, stack):
    minutes, sessions, volunteers = add_last_quarter_sessions(stack.db)
    quarter = next(p for p in presets(datetime.now(OSLO).date()) if p.kind == "last_quarter")
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.goto(f"{stack.url}/reports?from={quarter.start}&to={quarter.end}&programme=all")
    page.locator("#volunteers").get_by_role("link").first.click()
    period = page.locator("#period")
    expect(period).to_contain_text(f"{quarter.start:%-d %b %Y} – {quarter.end:%-d %b %Y}")
    expect(period).to_contain_text("all programmes")
    snapshot_widths(page, "report-volunteer-period")
    page.get_by_role("link", name=re.compile("^← Report")).click()
    expect(page).to_have_url(re.compile(f"from={quarter.start}&to={quarter.end}"))
