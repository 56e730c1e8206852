"""Accounts and people in a real browser: a forgotten password, a revoked invitation, a colleague who left."""

import re
from pathlib import Path

from playwright.sync_api import expect

from portal.seed import DEMO_PASSWORD

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
MANAGER = "manager@northwind.example"
OLENA = "olena@northwind.example"
MARCO = "marco@northwind.example"


def snapshot_widths(page, name):
    """The page at 1280 and 390 px wide, and neither scrolls sideways."""
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{name} scrolls sideways at {width}"
    page.set_viewport_size({"width": 1100, "height": 800})


def test_a_forgotten_password_is_reset_by_email(pages, page):
    page.goto(f"{pages.base_url}/login")
    page.get_by_role("link", name="Forgot your password?").click()
    snapshot_widths(page, "password-forgot")
    page.get_by_label("Email").fill(OLENA)
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("status")).to_contain_text("If an account uses that address")

    email = pages.wait_for_email(OLENA, "Reset your TEEI Partner Portal password")
    link = re.search(r"http://127\.0\.0\.1:\d+/password/reset/[\w-]+", email["text"]).group(0)
    page.goto(link)
    expect(page.get_by_role("heading", level=1)).to_have_text("Choose a new password")
    assert page.url.endswith("/password/reset"), "the token left the address bar"
    snapshot_widths(page, "password-reset")
    page.get_by_label("New password").fill("a-new-volunteer-password")
    page.get_by_role("button", name="Save the new password").click()
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")

    pages.sign_in(OLENA, DEMO_PASSWORD)
    expect(page.get_by_role("alert")).to_contain_text("Wrong email or password")
    pages.sign_in(OLENA, "a-new-volunteer-password")
    expect(page.get_by_role("heading", level=1)).to_have_text("My volunteering")

    page.get_by_role("link", name="Olena Kovalenko").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your account")
    snapshot_widths(page, "account")
    page.get_by_label("Your name").fill("Olena K.")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("Your name is saved.")
    expect(page.get_by_role("link", name="Olena K.")).to_be_visible()

    page.goto(link)  # the link works once
    expect(page.get_by_role("heading", level=1)).to_have_text("This reset link has been used")


def test_a_manager_revokes_an_invitation_pasted_from_outlook(pages, page, new_context):
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.get_by_role("link", name="Invitations").click()
    page.get_by_role("link", name="Invite colleagues").first.click()
    page.get_by_label("Email addresses").fill('Ana Ruiz <ana@northwind.example>; "Okafor, Ben" <ben@northwind.example>')
    page.get_by_label("TEEI Mentorship").check()
    page.get_by_role("button", name="Send invitations").click()
    expect(page.get_by_role("status")).to_contain_text("Invited 2 colleagues")

    email = pages.wait_for_email("ana@northwind.example", "invites you to volunteer")
    link = re.search(r"http://127\.0\.0\.1:\d+/invitations/accept/[\w-]+", email["text"]).group(0)
    page.get_by_role("link", name="Revoke the invitation to ana@northwind.example").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Revoke the invitation to ana@northwind.example?")
    page.get_by_role("button", name="Yes, revoke it").click()
    expect(page.get_by_role("status")).to_contain_text("The invitation to ana@northwind.example is revoked")
    expect(page.get_by_role("row", name=re.compile("ana@northwind.example"))).to_contain_text("revoked")
    expect(page.get_by_text("Showing all 2")).to_be_visible()
    snapshot_widths(page, "invitations")

    ana = new_context().new_page()
    ana.goto(link)
    expect(ana.get_by_role("heading", level=1)).to_have_text("This invitation was withdrawn")
    ana.context.close()


def test_a_manager_deactivates_a_colleague_who_left(pages, page, new_context):
    marco = new_context().new_page()
    marco.goto(f"{pages.base_url}/login")
    marco.get_by_label("Email").fill(MARCO)
    marco.get_by_role("button", name="Continue").click()
    marco.get_by_label("Password").fill(DEMO_PASSWORD)
    marco.get_by_role("button", name="Sign in").click()
    expect(marco.get_by_role("heading", level=1)).to_have_text("My volunteering")

    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.get_by_role("link", name="People").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("People")
    snapshot_widths(page, "people")
    page.get_by_role("link", name="Deactivate Marco Silva").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Deactivate Marco Silva?")
    snapshot_widths(page, "people-deactivate")
    page.get_by_role("button", name="Deactivate Marco Silva").click()
    expect(page.get_by_role("status")).to_contain_text("Marco Silva is deactivated")
    expect(page.get_by_role("row", name=re.compile(MARCO))).to_have_count(0)
    page.get_by_label("Show").select_option("deactivated")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_role("row", name=re.compile(MARCO))).to_be_visible()

    marco.reload()  # the colleague's open session ends at once
    expect(marco.get_by_role("heading", level=1)).to_have_text("Sign in")
    marco.get_by_label("Email").fill(MARCO)
    marco.get_by_role("button", name="Continue").click()
    marco.get_by_label("Password").fill(DEMO_PASSWORD)
    marco.get_by_role("button", name="Sign in").click()
    expect(marco.get_by_role("alert")).to_contain_text("Wrong email or password")

    # He comes back: reactivated from the list of colleagues who left, after a confirmation.
    page.get_by_role("link", name="Reactivate Marco Silva").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Reactivate Marco Silva?")
    snapshot_widths(page, "people-reactivate")
    page.get_by_role("button", name="Yes, reactivate Marco Silva").click()
    expect(page.get_by_role("status")).to_contain_text("Marco Silva is active again")
    marco.get_by_label("Password").fill(DEMO_PASSWORD)
    marco.get_by_role("button", name="Sign in").click()
    expect(marco.get_by_role("heading", level=1)).to_have_text("My volunteering")
    marco.context.close()


def test_a_manager_makes_a_volunteer_a_manager_and_adds_one_by_name(pages, page, new_context):
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.get_by_role("link", name="People").click()
    page.get_by_role("link", name="Make manager Marco Silva").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Make Marco Silva a manager?")
    snapshot_widths(page, "people-make-manager")
    page.get_by_role("button", name="Yes, make Marco Silva a manager").click()
    expect(page.get_by_role("status")).to_contain_text("Marco Silva is now a manager")
    expect(page.get_by_role("row", name=re.compile(MARCO))).to_contain_text("Manager")

    marco = new_context().new_page()  # he signs in as before, and manages now
    marco.goto(f"{pages.base_url}/login")
    marco.get_by_label("Email").fill(MARCO)
    marco.get_by_role("button", name="Continue").click()
    marco.get_by_label("Password").fill(DEMO_PASSWORD)
    marco.get_by_role("button", name="Sign in").click()
    expect(marco.get_by_role("navigation", name="Main").get_by_role("link", name="People")).to_be_visible()
    marco.context.close()

    page.get_by_role("link", name="Add a manager").click()
    page.get_by_label("Their name (optional)").fill("Grace Hopper")
    page.get_by_label("Email address").fill("not-an-address")
    page.get_by_label("Language of the invitation email").select_option("nb")
    page.get_by_role("button", name="Send the invitation").click()
    expect(page.get_by_label("Their name (optional)")).to_have_value("Grace Hopper")  # what was typed stays
    snapshot_widths(page, "people-new-manager")
    page.get_by_label("Email address").fill("grace@northwind.example")
    page.get_by_role("button", name="Send the invitation").click()
    expect(page.get_by_role("status")).to_contain_text("The invitation to manage with you is on its way")
    email = pages.wait_for_email("grace@northwind.example")
    assert "Grace Hopper" in email["text"]


def test_admin_pages_for_companies_and_demo_requests(pages, page):
    pages.sign_in("admin@teei.example", DEMO_PASSWORD)
    page.get_by_role("link", name="Northwind Logistics").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Northwind Logistics")
    snapshot_widths(page, "admin-company")
    page.get_by_role("link", name="Demo requests").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Demo requests")
    snapshot_widths(page, "admin-demo-requests")
    page.get_by_role("link", name="Applications").click()
    snapshot_widths(page, "admin-applications")
    page.get_by_role("link", name="Suppressions").click()
    snapshot_widths(page, "admin-suppressions")


def test_the_layout_keeps_content_off_the_header_and_the_screen_edge(pages, page):
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.get_by_role("link", name="Invitations").click()
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        header = page.locator(".site-header").bounding_box()
        heading = page.get_by_role("heading", level=1).bounding_box()
        brand = page.locator(".brand").bounding_box()
        assert heading["y"] - (header["y"] + header["height"]) >= 20, f"main content touches the header at {width} px"
        assert brand["x"] >= 16, f"the header touches the screen edge at {width} px"
    page.get_by_role("link", name="Invite colleagues").first.click()
    page.get_by_label("Email addresses").fill("ana@northwind.example")
    page.get_by_label("TEEI Language").check()
    page.get_by_role("button", name="Send invitations").click()
    # Invitations are cards on a phone (i26 item 11): nothing to scroll sideways, so no cue either.
    page.set_viewport_size({"width": 390, "height": 800})
    expect(page.get_by_role("row", name=re.compile("ana@northwind.example"))).to_be_visible()
    assert page.evaluate("document.querySelector('.invitation-cards').scrollWidth") <= 390
    expect(page.get_by_text("Scroll sideways to see every column.")).to_have_count(0)
