import re

from playwright.sync_api import expect

from portal.seed import DEMO_PASSWORD

MANAGER = "manager@northwind.example"


def test_manager_invites_colleagues_and_one_accepts(pages, page, new_context):
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.get_by_role("link", name="Invitations").click()
    page.get_by_role("link", name="Invite colleagues").first.click()

    emails = page.get_by_label("Email addresses")
    emails.fill("ana@northwind.example\nben@northwind\ncai@northwind.example")
    page.get_by_label("TEEI Language").check()
    page.get_by_role("button", name="Send invitations").click()
    expect(page.get_by_role("alert")).to_contain_text("“ben@northwind” is not a valid email address.")
    expect(emails).to_have_value(re.compile("ben@northwind"))

    emails.fill("ana@northwind.example\nben@northwind.example\ncai@northwind.example")
    page.get_by_role("button", name="Send invitations").click()
    expect(page.get_by_role("status")).to_contain_text("Invited 3 colleagues")

    email = pages.wait_for_email("ben@northwind.example", "invites you to volunteer")
    assert "nothing to log" in email["text"]
    link = re.search(r"http://127\.0\.0\.1:\d+/invitations/accept/[\w-]+", email["text"]).group(0)

    colleague = new_context().new_page()
    colleague.goto(link)
    expect(colleague.get_by_role("heading", level=1)).to_have_text("Join Northwind Logistics at TEEI")
    colleague.get_by_label("Your name").fill("Ben Okafor")
    colleague.get_by_label("Choose a password").fill("volunteer-password")
    colleague.get_by_role("button", name="Create my account").click()
    expect(colleague.get_by_role("heading", level=1)).to_have_text("My volunteering")
    expect(colleague.get_by_text("Ben Okafor · Northwind Logistics")).to_be_visible()
    colleague.screenshot(path="test-artifacts/invitation-accepted-employee.png", full_page=True)
    colleague.context.close()

    page.reload()
    row = page.get_by_role("row", name=re.compile("ben@northwind.example"))
    expect(row).to_contain_text("accepted")
    expect(page.get_by_role("row", name=re.compile("ana@northwind.example"))).to_contain_text("open")

    # On a phone the table scrolls inside its card; the page itself never scrolls sideways.
    page.set_viewport_size({"width": 375, "height": 740})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375


def _inside_viewport(locator, width):
    box = locator.bounding_box()
    assert box is not None, "not rendered"
    return box["x"] >= 0 and box["x"] + box["width"] <= width


def test_pasted_names_are_kept_and_phone_rows_show_status_and_actions(pages, page, new_context):
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.goto(f"{pages.base_url}/invitations/new")
    expect(page.get_by_text("“Ada Lovelace <ada@example.org>” is kept")).to_be_visible()
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=f"test-artifacts/invitations-new-{width}.png", full_page=True)
    page.get_by_label("Email addresses").fill(
        'Ada Lovelace <ada@northwind.example>; "Hopper, Grace" <grace@northwind.example>'
    )
    page.get_by_label("TEEI Mentorship").check()
    page.get_by_role("button", name="Send invitations").click()
    expect(page.get_by_role("status")).to_contain_text("Invited 2 colleagues")

    email = pages.wait_for_email("ada@northwind.example", "invites you to volunteer")
    assert "Hello Ada Lovelace," in email["text"]
    pages.wait_for_email("grace@northwind.example", "invites you to volunteer")

    # Both emails gone: each row offers Resend and Revoke.
    for _ in range(40):
        page.reload()
        if page.get_by_role("button", name=re.compile("^Resend")).count() == 2:
            break
        page.wait_for_timeout(500)
    expect(page.get_by_role("row", name=re.compile("ada@northwind.example"))).to_contain_text("Ada Lovelace")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path="test-artifacts/invitations-1280.png", full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for address in ("ada@northwind.example", "grace@northwind.example"):
        row = page.get_by_role("row", name=re.compile(address))
        for part in (
            row.locator(".invitation-state .badge"),
            row.get_by_role("button", name=re.compile("^Resend")),
            row.get_by_role("link", name=re.compile("^Revoke")),
        ):
            expect(part).to_be_visible()
            assert _inside_viewport(part, 390), f"{address}: {part} is off-screen at 390 px"
    page.screenshot(path="test-artifacts/invitations-390.png", full_page=True)

    link = re.search(r"http://127\.0\.0\.1:\d+/invitations/accept/[\w-]+", email["text"]).group(0)
    ada = new_context(viewport={"width": 1280, "height": 800}).new_page()
    ada.goto(link)
    expect(ada.get_by_label("Your name")).to_have_value("Ada Lovelace")
    ada.screenshot(path="test-artifacts/invitation-accept-prefilled-1280.png", full_page=True)
    ada.set_viewport_size({"width": 390, "height": 844})
    ada.screenshot(path="test-artifacts/invitation-accept-prefilled-390.png", full_page=True)
    ada.context.close()
