import re

from playwright.sync_api import expect

from portal.seed import DEMO_PASSWORD


def test_a_bounced_address_is_shown_bounced_then_blocked(pages, page):
    """Receipts end to end: provider model → signed webhook → outbox row → the manager's list."""
    pages.sign_in("manager@northwind.example", DEMO_PASSWORD)
    page.goto(f"{pages.base_url}/invitations/new")
    page.get_by_label("Email addresses").fill("bounce-test@northwind.example")
    page.get_by_label("TEEI Mentorship").check()
    page.get_by_role("button", name="Send invitations").click()

    row = page.get_by_role("row", name=re.compile("bounce-test@northwind.example"))
    for _ in range(60):  # the worker sends, the model answers with an email.bounced receipt
        if "bounced" in row.inner_text():
            break
        page.wait_for_timeout(250)
        page.reload()
    expect(row).to_contain_text("bounced")
    assert len([e for e in pages.stack.model.sent() if "bounce-test@northwind.example" in e["to"]]) == 1

    row.get_by_role("button", name=re.compile("Resend")).click()
    expect(page.get_by_role("status")).to_contain_text("being sent again")
    for _ in range(60):
        if "blocked" in row.inner_text():
            break
        page.wait_for_timeout(250)
        page.reload()
    expect(row).to_contain_text("blocked: the address bounced before")
    assert len([e for e in pages.stack.model.sent() if "bounce-test@northwind.example" in e["to"]]) == 1, (
        "a suppressed address is never sent to again"
    )
