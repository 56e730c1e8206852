"""Steps that cannot be taken back ask first, on a page that says what happens and whether it is
final (issue 47, item 1): closing a year, revoking an invitation, asking an applicant for more
information, cancelling a campaign. "Go back" changes nothing; only "Yes" acts."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from e2e.screenshots import ARTIFACTS, shoot
from e2e.test_applications import apply_as_a_company
from e2e.test_campaigns import add_company_of_three, compose
from portal.seed import DEMO_PASSWORD, seed_demo

MANAGER = "manager@northwind.example"
ADMIN = "admin@teei.example"
SHOTS = ARTIFACTS / "confirmations"


def looked_at(page, name):
    """Both widths, neither scrolling sideways."""
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{name} scrolls sideways at {width}"
    shoot(page, SHOTS, name)


def test_a_manager_is_asked_before_closing_a_year_and_revoking_an_invitation(pages, page, stack):
    seed_demo(stack.db, secret_key=stack.secret_key, history=True)  # a year of sessions: last year can close
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.goto(f"{pages.base_url}/reports/settings")
    close = page.get_by_role("link", name=re.compile(r"^Close \d{4}$")).first
    year = close.get_attribute("aria-label").removeprefix("Close ")
    close.click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Close {year} for filing?")
    expect(page.get_by_text("Closing is final.")).to_be_visible()
    looked_at(page, "close-year")
    page.get_by_role("link", name="Go back").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Report settings")
    expect(page.get_by_role("link", name=f"Close {year}")).to_be_visible()  # still open: going back closed nothing
    page.get_by_role("link", name=f"Close {year}").click()
    page.get_by_role("button", name=f"Yes, close {year}").click()
    expect(page.get_by_role("status")).to_contain_text(f"{year} is closed. Its filed report is")

    page.goto(f"{pages.base_url}/invitations/new")
    page.get_by_label("Email addresses").fill("ana@northwind.example")
    page.get_by_label("TEEI Mentorship").check()
    page.get_by_role("button", name="Send invitations").click()
    page.get_by_role("link", name="Revoke the invitation to ana@northwind.example").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Revoke the invitation to ana@northwind.example?")
    looked_at(page, "revoke-invitation")
    page.get_by_role("link", name="Go back").click()
    expect(page.get_by_role("row", name=re.compile("ana@northwind.example"))).not_to_contain_text("revoked")
    page.get_by_role("link", name="Revoke the invitation to ana@northwind.example").click()
    page.get_by_role("button", name="Yes, revoke it").click()
    expect(page.get_by_role("status")).to_contain_text("The invitation to ana@northwind.example is revoked")


def test_an_admin_is_asked_before_asking_for_information_and_cancelling_a_campaign(pages, page, stack):
    apply_as_a_company(page, stack)
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/applications")
    page.get_by_role("link", name="Fjord Analytics AS").click()
    page.get_by_label("Note to the applicant").fill("How many of your analysts would mentor?")
    page.get_by_role("button", name="Ask for more information").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Ask Fjord Analytics AS for more information?")
    looked_at(page, "ask-for-information")
    page.get_by_role("button", name="Yes, send the question").click()
    expect(page.locator(".flash-success")).to_contain_text("Asked Ingrid Dahl for more information.")

    add_company_of_three(stack)
    compose(page, "Winter news", "Winter at TEEI", "Sessions resume in January.")
    page.get_by_label("Send at (optional)").fill("24.12.2030 00:30")
    page.get_by_role("button", name="Send campaign…").click()
    page.get_by_role("button", name="Yes, schedule it").click()
    expect(page.get_by_text("Scheduled for 24 Dec 2030, 00:30 CET")).to_be_visible()
    page.get_by_role("link", name="Cancel campaign").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Cancel Winter news?")
    expect(page.get_by_text("Cancelling is final.")).to_be_visible()
    looked_at(page, "cancel-campaign")
    page.get_by_role("link", name="Go back").click()
    expect(page.locator("#campaign-status")).to_have_text("Scheduled")
    page.get_by_role("link", name="Cancel campaign").click()
    page.get_by_role("button", name="Yes, cancel the campaign").click()
    expect(page.locator("#campaign-status")).to_have_text("Cancelled")
