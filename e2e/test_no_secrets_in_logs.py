"""No token or address in any URL a log records (issue 14, finding 3), and no page breaks its CSP.

The browser flows that carry secrets (an invitation accepted from its email, a suppression added
and removed, sign-in and sign-out) run in Chromium against gunicorn as make run starts it; then the
access log is searched for each token and address.
"""

import re

from playwright.sync_api import expect

from portal.seed import DEMO_PASSWORD

MANAGER = "manager@northwind.example"
ADMIN = "admin@teei.example"
INVITED = "dana@northwind.example"
SUPPRESSED = "bounced.person@example.org"


def test_browser_flows_leave_no_token_or_address_in_the_access_log(pages, page, new_context, stack):
    refused = []
    page.on(
        "console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None
    )

    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.goto(f"{stack.url}/invitations/new")
    page.get_by_label("Email addresses").fill(INVITED)
    page.get_by_label("TEEI Language").check()
    page.get_by_role("button", name="Send invitations").click()
    expect(page.get_by_role("status")).to_contain_text("Invited 1 colleague")
    page.get_by_role("button", name="Sign out").click()

    email = pages.wait_for_email(INVITED, "invites you to volunteer")
    link = re.search(r"http://127\.0\.0\.1:\d+/invitations/accept/([\w-]+)", email["text"])
    token = link.group(1)
    colleague = new_context().new_page()
    colleague.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    colleague.goto(link.group(0))
    # The token was exchanged on the first request: the page people fill in has a clean URL.
    assert colleague.url == f"{stack.url}/invitations/accept"
    colleague.get_by_label("Your name").fill("Dana Moe")
    colleague.get_by_label("Choose a password").fill("volunteer-password")
    colleague.get_by_role("button", name="Create my account").click()
    expect(colleague.get_by_role("heading", level=1)).to_have_text("My volunteering")
    colleague.context.close()

    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/suppressions/")
    page.get_by_label("Email address").fill(SUPPRESSED)
    page.get_by_label("Reason", exact=True).fill("Asked by phone")
    page.get_by_role("button", name="Add to the list").click()
    expect(page.get_by_role("status")).to_contain_text("will not be emailed")
    page.get_by_role("button", name=f"Remove {SUPPRESSED}").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(f"Remove {SUPPRESSED}")
    page.get_by_label("Reason for removing").fill("Mailbox fixed")
    page.get_by_role("button", name="Remove from the list").click()
    expect(page.get_by_role("status")).to_contain_text("may be emailed again")

    # Every page in the admin's menu renders under the Content-Security-Policy (checked below).
    for path in ("/admin/applications", "/", "/apply", "/demo"):
        page.goto(f"{stack.url}{path}")
    page.get_by_role("button", name="Sign out").click()
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    for path in ("/reports", "/invitations", "/invitations/new"):
        page.goto(f"{stack.url}{path}")

    log = stack.access_log.read_text()
    assert "GET /invitations/accept/[token]" in log, "the log is the one the flows wrote"
    assert "POST /admin/suppressions/remove" in log
    for secret in (token, INVITED, SUPPRESSED, MANAGER, ADMIN, "%40"):
        assert secret not in log, f"{secret!r} is in the access log"
    assert refused == [], "a page broke its Content-Security-Policy"
