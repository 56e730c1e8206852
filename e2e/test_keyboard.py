"""Every flow, with the keyboard alone: a skip link, a visible focus at every stop, and no trap."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from e2e.accessibility import AccessibilityAudit
from e2e.conftest import ARTIFACTS
from e2e.keyboard import KeyboardUser
from portal.seed import DEMO_PASSWORD, seed_demo

MANAGER = "manager@northwind.example"
ADMIN = "admin@teei.example"


def sign_in(keys: KeyboardUser, url: str, email: str) -> None:
    keys.page.goto(f"{url}/login")
    keys.skip_to_content()
    keys.fill("Email", email)
    with keys.page.expect_navigation():
        keys.page.keyboard.press("Enter")
    keys.fill("Password", DEMO_PASSWORD)  # the address's next step
    with keys.page.expect_navigation():
        keys.page.keyboard.press("Enter")


def test_sign_in_and_the_report_by_keyboard(page, stack):
    seed_demo(
        stack.db, secret_key=stack.secret_key, history=True
    )  # a year of sessions: a company without any sees its first step instead
    keys = KeyboardUser(page)
    page.goto(f"{stack.url}/login")
    keys.assert_no_trap()
    sign_in(keys, stack.url, MANAGER)
    expect(page.get_by_role("heading", level=1)).to_have_text("Volunteering report")

    keys.activate("Last quarter")
    expect(page.get_by_role("link", name="Last quarter", exact=True)).to_have_attribute("aria-current", "true")
    keys.skip_to_content()
    keys.tab_to("PDF for filing")  # reached, focus drawn (checked at every stop)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "keyboard-focus-report.png"))
    # Every figure of the report is a link to its session records (issue 50): the period's dates come
    # after a quarter's months, programmes and volunteers, each figure one stop with its focus drawn.
    keys.tab_to("From", most=400)
    page.screenshot(path=str(ARTIFACTS / "keyboard-focus-date.png"))
    keys.assert_no_trap()


def test_invite_and_accept_by_keyboard(page, pages, stack, new_context):
    keys = KeyboardUser(page)
    sign_in(keys, stack.url, MANAGER)
    keys.activate("Invitations")
    keys.skip_to_content()
    keys.activate("Invite colleagues")
    keys.fill("Email addresses", "dana@northwind.example")
    keys.tab_to("TEEI Language")
    page.keyboard.press("Space")
    keys.activate("Send invitations")
    expect(page.get_by_role("status")).to_contain_text("Invited 1 colleague")

    email = pages.wait_for_email("dana@northwind.example", "invites you to volunteer")
    link = re.search(r"http://127\.0\.0\.1:\d+/invitations/accept/[\w-]+", email["text"]).group(0)
    colleague = new_context().new_page()
    colleague_keys = KeyboardUser(colleague)
    colleague.goto(link)
    colleague_keys.skip_to_content()
    colleague_keys.fill("Your name", "Dana Holm")
    colleague_keys.fill("Choose a password", "volunteer-password")
    colleague_keys.activate("Create my account")
    expect(colleague.get_by_role("heading", level=1)).to_have_text("My volunteering")


def test_apply_and_decide_by_keyboard(page, pages, stack, new_context):
    visitor = new_context().new_page()
    keys = KeyboardUser(visitor)
    visitor.goto(stack.url)
    keys.activate("Become a partner")
    keys.skip_to_content()
    # Sent empty first: the error summary takes the focus, so it is read out at once.
    keys.activate("Send application")
    expect(visitor.get_by_role("alert")).to_be_focused()
    visitor.screenshot(path=str(ARTIFACTS / "keyboard-focus-error-summary.png"))
    keys.fill("Company name", "Keyboard Co")
    keys.fill("Your name", "Kim Keys")
    keys.fill("Work email", "kim@keyboard.example")
    keys.fill("Number of employees", "30")
    keys.activate("Send application")
    expect(visitor.get_by_role("heading", level=1)).to_have_text("Thank you for applying")

    admin = KeyboardUser(page)
    sign_in(admin, stack.url, ADMIN)
    admin.activate("Applications")
    admin.skip_to_content()
    admin.activate("Keyboard Co")
    expect(page.get_by_role("heading", level=1)).to_have_text("Keyboard Co")
    admin.activate("Approve and invite")
    # The confirmation is a page of its own: the focus starts at its top, and going back is a link.
    expect(page.get_by_role("heading", level=1)).to_have_text("Approve Keyboard Co?")
    admin.activate("Yes, approve and invite")
    expect(page.locator(".flash-success")).to_contain_text("Approved")
    pages.wait_for_email("kim@keyboard.example", "TEEI")


def test_demo_request_by_keyboard(page, pages, stack):
    keys = KeyboardUser(page)
    page.goto(stack.url)
    keys.activate("Request a demo")
    keys.skip_to_content()
    keys.fill("Your name", "Lee Keys")
    keys.fill("Work email", "lee@keys.example")
    keys.fill("Company", "Keys Ltd")
    keys.activate("Request a demo")
    expect(page.get_by_role("heading", level=1)).to_have_text("Thank you, we will be in touch")
    pages.wait_for_email("lee@keys.example", "We received your demo request")


def test_password_reset_by_keyboard(page, pages, stack):
    keys = KeyboardUser(page)
    page.goto(f"{stack.url}/login")
    keys.activate("Forgot your password?")
    keys.skip_to_content()
    keys.fill("Email", "olena@northwind.example")
    keys.activate("Send the link")
    expect(page.get_by_role("status")).to_contain_text("If an account uses that address")

    email = pages.wait_for_email("olena@northwind.example", "Reset your TEEI Partner Portal password")
    page.goto(re.search(r"http://127\.0\.0\.1:\d+/password/reset/[\w-]+", email["text"]).group(0))
    keys.skip_to_content()
    keys.fill("New password", "a-keyboard-password")
    keys.activate("Save the new password")
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    keys.assert_no_trap()


def test_error_pages_name_the_problem_and_offer_a_way_on(page, stack):
    """Audited like every page (after the test); the heading says what happened."""
    keys = KeyboardUser(page)
    page.goto(f"{stack.url}/no-such-page")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    keys.skip_to_content()
    sign_in(keys, stack.url, MANAGER)
    page.goto(f"{stack.url}/admin/")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    keys.assert_no_trap()


def test_the_audit_reports_what_axe_finds(stack, browser):
    """The audit that runs after every test finds real problems: a page built to have them."""
    audit = AccessibilityAudit()
    context = browser.new_context()  # not the session's audit: this page is meant to fail it
    audit.watch(context)
    probe = f"{stack.url}/axe-probe"
    page = context.new_page()
    page.route(
        probe,
        lambda route, _request: route.fulfill(
            content_type="text/html",
            body="<html><title>Probe</title><body><img src='/static/x.png'>"
            "<p style='color:#bbb;background:#fff'>pale text</p></body></html>",
        ),
    )
    page.goto(probe)
    findings = {(f.rule, f.impact, f.width) for f in audit.audit_pending(browser)}
    context.close()
    for width in (1280, 390):
        assert ("image-alt", "critical", width) in findings
        assert ("html-has-lang", "serious", width) in findings
        assert ("color-contrast", "serious", width) in findings
