"""A manager clicks a figure of the report and reads the session records it counts (issue 50, item 2)."""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from playwright.sync_api import expect

from e2e.screenshots import ARTIFACTS, shoot
from portal.seed import DEMO_PASSWORD, seed_demo
from tests.reports.conftest import shown_hours

MANAGER = "manager@northwind.example"
OSLO = ZoneInfo("Europe/Oslo")


def test_a_figure_opens_its_records_and_they_add_up_to_it(pages, page, stack):
    seed_demo(stack.db, secret_key=stack.secret_key, history=True)
    today = datetime.now(OSLO).date()
    start = today.replace(year=today.year - 1) + timedelta(days=1)
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{stack.url}/reports?from={start}&to={today}&programme=all")

    # The busiest month's hours, in the table beside the chart.
    months = page.locator("#months-title").locator("xpath=..").locator(".wide-only table")
    cells = months.locator("td[data-label='Hours'] a.figure-link")
    texts = cells.all_inner_texts()
    busiest = max(range(len(texts)), key=lambda i: float(texts[i].replace(",", "")))
    month = months.locator("tbody tr").nth(busiest).locator("th").inner_text()
    figure = texts[busiest]
    shoot(page, ARTIFACTS, "report-figure-links")  # every figure a link, underlined dotted
    page.set_viewport_size({"width": 1280, "height": 900})
    cells.nth(busiest).click()

    expect(page.get_by_role("heading", level=1)).to_have_text("Session records")
    expect(page.locator(".lede")).to_contain_text(month.split()[0])
    expect(page.locator("#drill-hours")).to_have_text(figure)
    expect(page.locator("#drill-records tbody tr").first).to_be_visible()
    shoot(page, ARTIFACTS, "report-drilldown")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # the records are cards on a phone

    # The CSV holds every record of the figure, and they add up to it.
    page.set_viewport_size({"width": 1280, "height": 900})
    with page.expect_download() as download:
        page.get_by_role("link", name="Download CSV").click()
    rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8-sig").read())))
    assert shown_hours(sum(int(r["minutes"]) for r in rows)) == figure
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d[+-]\d\d:\d\d", r["held_at_local"]) for r in rows)

    # Back to the report, in two clicks from any figure.
    page.get_by_role("link", name=re.compile("^← Report for")).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Volunteering report")
