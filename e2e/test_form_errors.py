"""Forms as GOV.UK's design system does them, in a real browser (issue 47, item 7): the error
summary takes the focus when the page loads and its links take a person to the field; what was
typed is still there; a password can be shown with a button that only exists with JavaScript.
(Every form's markup is walked in tests/test_form_input.py; this is what needs a browser.)"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from e2e.screenshots import ARTIFACTS, shoot
from portal.seed import DEMO_PASSWORD

MANAGER = "manager@northwind.example"
SHOTS = ARTIFACTS / "form-errors"


def test_a_refused_form_focuses_its_summary_links_to_each_field_and_keeps_what_was_typed(pages, page):
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.goto(f"{pages.base_url}/reports/settings")
    page.get_by_label("Hourly cost of employee time (B4SI)").fill("six hundred")
    page.get_by_label("Currency").fill("kr")
    page.get_by_role("button", name="Save settings").click()

    expect(page).to_have_title(re.compile(r"^Error: Report settings"))
    summary = page.get_by_role("alert").filter(has_text="There is a problem")
    expect(summary).to_be_focused()  # a screen reader reads it first; Tab goes on into its links
    expect(summary.get_by_role("link")).to_have_count(2)
    expect(page.get_by_label("Hourly cost of employee time (B4SI)")).to_have_value("six hundred")
    expect(page.get_by_label("Currency")).to_have_value("kr")
    expect(page.get_by_label("Hourly cost of employee time (B4SI)")).to_have_accessible_description(
        re.compile(r"Salary, overheads.*Error: Hourly cost: a positive amount")
    )
    shoot(page, SHOTS, "report-settings-refused")

    summary.get_by_role("link", name=re.compile("^Currency")).click()
    expect(page.get_by_label("Currency")).to_be_focused()
    page.get_by_label("Currency").fill("EUR")
    page.get_by_label("Hourly cost of employee time (B4SI)").fill("650,50")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_role("status")).to_contain_text("Report settings saved.")
    expect(page).to_have_title(re.compile(r"^Report settings"))
    expect(page.get_by_label("Hourly cost of employee time (B4SI)")).to_have_value("650.50")


def test_a_failed_sign_in_says_wrong_email_or_password_by_the_password(pages, page):
    for address in (MANAGER, "nobody@northwind.example"):  # an account, and none: the same answer
        pages.sign_in(address, "not-the-password")
        expect(page).to_have_title(re.compile(r"^Error: Sign in"))
        expect(page.get_by_role("alert")).to_contain_text("Wrong email or password.")
        expect(page.get_by_label("Password", exact=True)).to_have_accessible_description(
            "Error: Wrong email or password."
        )
        expect(page.get_by_label("Email")).to_have_value(address)
        expect(page.get_by_label("Password", exact=True)).to_have_value("")
    shoot(page, SHOTS, "sign-in-refused")


def test_the_password_can_be_shown_and_without_javascript_it_is_a_plain_password_field(pages, page, new_context):
    page.goto(f"{pages.base_url}/login")
    page.get_by_label("Email").fill(MANAGER)
    page.get_by_role("button", name="Continue").click()
    password = page.get_by_label("Password", exact=True)
    password.fill(DEMO_PASSWORD)
    expect(password).to_have_attribute("type", "password")
    page.get_by_role("button", name="Show password").click()
    expect(password).to_have_attribute("type", "text")
    expect(page.get_by_role("button", name="Hide password").locator("[aria-hidden=true]")).to_have_text("Hide")
    page.get_by_role("button", name="Hide password").click()
    expect(password).to_have_attribute("type", "password")
    page.get_by_role("button", name="Show password").click()
    page.get_by_role("button", name="Sign in").click()  # a shown password still signs in
    expect(page.get_by_role("heading", level=1)).to_have_text("Volunteering report")

    plain = new_context(java_script_enabled=False).new_page()
    plain.goto(f"{pages.base_url}/login")
    plain.get_by_label("Email").fill(MANAGER)
    plain.get_by_role("button", name="Continue").click()
    expect(plain.get_by_label("Password", exact=True)).to_have_attribute("type", "password")
    expect(plain.get_by_role("button", name="Show password")).to_have_count(0)  # hidden: no button that does nothing
    plain.get_by_label("Password", exact=True).fill(DEMO_PASSWORD)
    plain.get_by_role("button", name="Sign in").click()
    expect(plain.get_by_role("heading", level=1)).to_have_text("Volunteering report")
