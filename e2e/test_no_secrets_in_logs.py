"""No token, address, password or email body in any log (issues 13 and 14), and no page breaks its CSP.

The browser flows that carry secrets (an invitation accepted from its email, a password reset from
its email, a demo request with a message, a suppression added and removed, sign-in and sign-out)
run in Chromium against the portal as production runs it: gunicorn with gunicorn.conf.py and a
worker, with LOG_FORMAT=json. Then every log (the web server's, its access log, the worker's) is
searched for each secret, and the logs are checked to be what an operator's collector reads: one
JSON object a line, with the request's ID carried from the web request into the worker's lines.
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from e2e.conftest import running_stack
from portal.core.settings import DEV_WEBHOOK_SECRET
from portal.seed import DEMO_PASSWORD

MANAGER = "manager@northwind.example"
ADMIN = "admin@teei.example"
INVITED = "dana@northwind.example"
SUPPRESSED = "bounced.person@example.org"
OLENA = "olena@northwind.example"
VISITOR = "sofia@lumen.example"
DEMO_MESSAGE = "About 40 colleagues might join. Tuesdays suit us."
NEW_PASSWORDS = ("volunteer-password", "a-new-volunteer-password")


@pytest.fixture
def stack(portal_env, tmp_path):
    """The e2e stack with the logs an operator's collector reads: one JSON object a line."""
    with running_stack(portal_env, tmp_path / "logs", log_format="json") as running:
        yield running


def test_browser_flows_leave_no_secret_in_any_log(pages, page, new_context, stack):
    refused = []

    def watch(p):
        p.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)

    watch(page)
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.goto(f"{stack.url}/invitations/new")
    page.get_by_label("Email addresses").fill(INVITED)
    page.get_by_label("TEEI Language").check()
    page.get_by_role("button", name="Send invitations").click()
    expect(page.get_by_role("status")).to_contain_text("Invited 1 colleague")
    page.get_by_role("button", name="Sign out").click()

    invitation = pages.wait_for_email(INVITED, "invites you to volunteer")
    link = re.search(r"http://127\.0\.0\.1:\d+/invitations/accept/([\w-]+)", invitation["text"])
    invite_token = link.group(1)
    colleague = new_context().new_page()
    watch(colleague)
    colleague.goto(link.group(0))
    # The token was exchanged on the first request: the page people fill in has a clean URL.
    assert colleague.url == f"{stack.url}/invitations/accept"
    colleague.get_by_label("Your name").fill("Dana Moe")
    colleague.get_by_label("Choose a password").fill(NEW_PASSWORDS[0])
    colleague.get_by_role("button", name="Create my account").click()
    expect(colleague.get_by_role("heading", level=1)).to_have_text("My volunteering")
    colleague.context.close()

    # A forgotten password, reset from its email.
    page.goto(f"{stack.url}/password/forgot")
    page.get_by_label("Email").fill(OLENA)
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("status")).to_contain_text("If an account uses that address")
    reset = pages.wait_for_email(OLENA, "Reset your TEEI Partner Portal password")
    reset_link = re.search(r"http://127\.0\.0\.1:\d+/password/reset/([\w-]+)", reset["text"])
    page.goto(reset_link.group(0))
    page.get_by_label("New password").fill(NEW_PASSWORDS[1])
    page.get_by_role("button", name="Save the new password").click()
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")

    # A visitor's demo request, with a message of their own.
    page.goto(f"{stack.url}/demo")
    page.get_by_label("Your name", exact=True).fill("Sofia Reyes")
    page.get_by_label("Work email", exact=True).fill(VISITOR)
    page.get_by_label("Company", exact=True).fill("Lumen Retail")
    page.get_by_label("Anything we should know?").fill(DEMO_MESSAGE)
    page.get_by_role("button", name="Request a demo").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Thank you, we will be in touch")
    demo_note = pages.wait_for_email("sales@teei.example", "Demo request from Lumen Retail")

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
    stack.model.wait_for_receipts(timeout=30)

    logs = {name: (stack.logs / f"{name}.log").read_text() for name in ("web", "access", "worker")}
    assert "/invitations/accept/[token]" in logs["access"], "the access log is the one the flows wrote"
    assert "/password/reset/[token]" in logs["access"]
    bodies = [_body_sentence(invitation), _body_sentence(reset), _body_sentence(demo_note)]
    secrets = [invite_token, reset_link.group(1), INVITED, SUPPRESSED, MANAGER, ADMIN, OLENA, VISITOR, "%40"]
    secrets += [DEMO_MESSAGE, "Tuesdays suit us", DEMO_PASSWORD, *NEW_PASSWORDS, DEV_WEBHOOK_SECRET, *bodies]
    for name, text in logs.items():
        for secret in secrets:
            assert secret not in text, f"{secret!r} is in the {name} log"
        assert "@" not in text, f"an address-like text is in the {name} log"
    assert refused == [], "a page broke its Content-Security-Policy"

    # One JSON object a line, in every log, and the request's ID followed into the worker.
    lines = {name: [json.loads(line) for line in text.splitlines() if line.strip()] for name, text in logs.items()}
    invite_post = next(
        line for line in lines["access"] if line["method"] == "POST" and line["path"] == "/invitations/new"
    )
    assert invite_post["request_id"] and invite_post["status"] == "302"
    assert any(line["path"] == "/webhooks/resend" for line in lines["access"]), "receipts, at their mount point"
    delivered = [line for line in lines["worker"] if line.get("request_id") == invite_post["request_id"]]
    assert delivered and all(line["outbox_id"] and line["outbox_id"].startswith("inv_") for line in delivered)
    assert any("ack:sent" in line["message"] for line in delivered)


def _body_sentence(email: dict) -> str:
    """A long line of the email's text body: something only the email itself contains."""
    candidates = [line.strip() for line in email["text"].splitlines() if len(line.strip()) > 40 and "http" not in line]
    return max(candidates, key=len)
