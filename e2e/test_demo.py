"""A visitor asks for a demo: in Chromium against a running portal, worker and provider model."""

import re
from pathlib import Path

from playwright.sync_api import expect

from e2e.test_home import ADMIN, at_each_width, sign_in

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
VISITOR = "sofia@lumen.example"
SALES_INBOX = "sales@teei.example"  # the default SALES_INBOX


def snapshot(page, name):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_visitor_asks_for_a_demo_and_both_emails_go_out(pages, page, stack):
    page.goto(stack.url)
    page.get_by_role("link", name="Request a demo").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Request a demo")

    page.get_by_role("button", name="Request a demo").click()
    expect(page.get_by_role("alert")).to_contain_text("Enter your name.")
    expect(page.get_by_role("alert")).to_contain_text("Enter your work email address.")
    snapshot(page, "demo-form-errors")

    page.get_by_label("Your name", exact=True).fill("Sofia Reyes")
    page.get_by_label("Work email", exact=True).fill(VISITOR)
    page.get_by_label("Company", exact=True).fill("Lumen Retail")
    page.get_by_label("Anything we should know?").fill("About 40 colleagues might join. Tuesdays suit us.")
    page.get_by_role("button", name="Request a demo").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Thank you, we will be in touch")

    confirmation = pages.wait_for_email(VISITOR, "We received your demo request")
    notification = pages.wait_for_email(SALES_INBOX, "Demo request from Lumen Retail")
    assert "Sofia Reyes" not in confirmation["text"], "the confirmation repeats nothing typed in the form"
    assert VISITOR in notification["text"] and "Tuesdays suit us." in notification["text"]
    assert notification["reply_to"] == [VISITOR]
    assert len([e for e in stack.model.sent() if VISITOR in e["to"]]) == 1


def test_public_forms_fit_a_phone(page, stack):
    page.set_viewport_size({"width": 375, "height": 740})
    for path, heading in (("/apply", "Become a TEEI partner"), ("/demo", "Request a demo")):
        page.goto(stack.url + path)
        expect(page.get_by_role("heading", level=1)).to_have_text(heading)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{path} scrolls sideways on a phone"


def test_an_admin_follows_up_a_demo_request(page, stack):
    page.goto(f"{stack.url}/demo")
    page.get_by_label("Your name", exact=True).fill("Sofia Reyes")
    page.get_by_label("Work email", exact=True).fill("sofia@lumen.example")
    page.get_by_label("Company", exact=True).fill("Lumen Retail")
    page.get_by_label("Anything we should know?").fill("About 40 colleagues might join.")
    page.locator("main").get_by_role("button", name="Request a demo").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Thank you, we will be in touch")

    sign_in(page, stack.url, ADMIN)
    page.get_by_role("link", name="Demo requests").click()
    expect(page.get_by_role("row", name=re.compile("Sofia Reyes.*New"))).to_be_visible()
    at_each_width(page, "admin-demo-requests")
    page.get_by_role("link", name="Sofia Reyes").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Demo request from Sofia Reyes")
    page.get_by_label("Status").select_option("contacted")
    page.get_by_label("Note for colleagues").fill("Called Sofia; demo on Tuesday at 10.")
    expect(page.get_by_text("You have 1,964 characters left")).to_be_visible()
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash-success")).to_have_text("Saved: the request from Sofia Reyes is contacted.")
    expect(page.get_by_label("Status")).to_have_value("contacted")
    at_each_width(page, "admin-demo-request-detail")

    page.get_by_role("link", name="← All demo requests").click()
    expect(page.get_by_role("row", name=re.compile("Sofia Reyes.*Contacted.*Called Sofia"))).to_be_visible()
    page.get_by_role("link", name=re.compile("^Contacted")).click()
    expect(page.get_by_text("Showing all 1")).to_be_visible()
