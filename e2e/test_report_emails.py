"""A manager subscribes to report emails, sends themself a test, and opens it with its PDF in the mail viewer."""

from __future__ import annotations

import io
from pathlib import Path

from playwright.sync_api import expect
from pypdf import PdfReader

from portal.seed import DEMO_PASSWORD

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
MANAGER = "manager@northwind.example"


def test_manager_subscribes_sends_a_test_and_opens_its_pdf(pages, page, stack):
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Report emails").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Report emails")
    expect(page.locator("#schedule-state")).to_contain_text("You receive no report emails")

    page.get_by_label("Every month").check()
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#schedule-state")).to_contain_text("You are subscribed (every month)")

    page.get_by_role("button", name="Send me a test").click()
    expect(page.get_by_text("is on its way to")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(ARTIFACTS / f"report-emails-{width}.png"), full_page=True)

    email = pages.wait_for_email(MANAGER, "[Test] Volunteering report")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{stack.model.url}/view/{email['id']}")
    expect(page.get_by_text("Northwind Logistics").first).to_be_visible()
    attachment = page.get_by_role("link", name=".pdf")
    expect(attachment).to_have_count(1)
    page.screenshot(path=str(ARTIFACTS / "report-email-viewer.png"), full_page=True)

    response = page.request.get(f"{stack.model.url}{attachment.get_attribute('href')}")
    assert response.ok and response.headers["content-type"] == "application/pdf"
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(response.body())).pages).split())
    assert "Northwind Logistics" in text and "VOLUNTEERING REPORT" in text
    (ARTIFACTS / "report-email.pdf").write_bytes(response.body())

    # The mail viewer counts one accepted email for the one click.
    assert [e["to"] for e in stack.model.sent()].count([MANAGER]) == 1
