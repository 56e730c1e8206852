"""A filed report's ID is checked by anyone (issue 47, item 2): the manager downloads last quarter's
filing PDF, the report page states the same ID, and a reader with no account opens /verify/<ID>
and sees the company, the period and the totals the PDF states; a wrong ID says so plainly."""

from __future__ import annotations

import io
import re

from playwright.sync_api import expect
from pypdf import PdfReader

from e2e.screenshots import ARTIFACTS, shoot
from e2e.test_reports import MANAGER, add_last_quarter_sessions
from portal.seed import DEMO_PASSWORD
from tests.reports.conftest import shown_hours

SHOTS = ARTIFACTS / "verify"
REPORT_ID = re.compile(r"TEEI-\d+-\d{8}-\d{8}-[0-9A-F]{8}")


def test_a_reader_without_an_account_verifies_a_filed_report(pages, page, stack, new_context):
    minutes, sessions, volunteers = add_last_quarter_sessions(stack.db)
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.get_by_role("link", name="Last quarter", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("link", name="PDF for filing", exact=True).click()
    body = open(download.value.path(), "rb").read()
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(body)).pages).split())
    (report_id,) = set(REPORT_ID.findall(text))
    page.reload()
    expect(page.locator("#filed-id")).to_contain_text(f"Filed as report {report_id}")
    shoot(page, SHOTS, "report-filed-id")

    reader = new_context().new_page()  # someone who read the ID in an annual report
    reader.goto(f"{stack.url}/verify/{report_id}")
    expect(reader.get_by_role("heading", level=1)).to_have_text(f"Report {report_id} was filed")
    expect(reader.locator("#verify-company")).to_have_text("Northwind Logistics")
    expect(reader.locator("#verify-hours")).to_have_text(shown_hours(minutes))
    expect(reader.locator("#verify-sessions")).to_have_text(str(sessions))
    assert f"{shown_hours(minutes)} Verified hours" in text, "the page states the PDF's total"
    for width in (1280, 390):
        reader.set_viewport_size({"width": width, "height": 900})
        assert reader.evaluate("document.documentElement.scrollWidth") <= width
    shoot(reader, SHOTS, "verify")

    wrong = report_id[:-8] + "00000000"
    answer = reader.goto(f"{stack.url}/verify/{wrong}")
    assert answer.status == 404
    expect(reader.get_by_role("heading", level=1)).to_have_text("No filed report has this ID")
    shoot(reader, SHOTS, "verify-unknown")
