"""A company applies, and an admin decides: in Chromium against a running portal, worker and provider model."""

import re
import time
from pathlib import Path

import sqlalchemy as sa
from playwright.sync_api import expect

from portal.seed import DEMO_PASSWORD

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
ADMIN = "admin@teei.example"
APPLICANT = "ingrid@fjord.example"


def snapshot(page, name):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def apply_as_a_company(page, stack, company="Fjord Analytics AS"):
    page.goto(stack.url)
    page.get_by_role("link", name="Become a partner").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Become a TEEI partner")
    page.get_by_label("Company name", exact=True).fill(company)
    page.get_by_label("Your name", exact=True).fill("Ingrid Dahl")
    page.get_by_label("Work email", exact=True).fill(APPLICANT)
    page.get_by_label("Number of employees", exact=True).fill("120")
    page.get_by_label("Why would you like to partner with TEEI?").fill(
        "Our analysts would like to mentor women starting careers in data."
    )
    snapshot(page, "applications-form-filled")
    page.get_by_role("button", name="Send application").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Thank you for applying")
    snapshot(page, "applications-thanks")


def emails_to(stack, address, subject_contains):
    return [e for e in stack.model.sent() if address in e["to"] and subject_contains in e["subject"]]


def open_application_as_admin(pages, page, company):
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.get_by_role("link", name="Applications").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Partner applications")
    snapshot(page, "applications-admin-list")
    page.get_by_role("link", name=company).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(company)


def test_company_applies_and_admin_declines_with_a_double_click(pages, page, stack):
    apply_as_a_company(page, stack)
    received = pages.wait_for_email(APPLICANT, "We received your partner application")
    # It repeats nothing typed into the form: anyone can type anyone's address (issue 46, item 12).
    assert "Fjord Analytics AS" not in received["text"]
    assert "If you did not apply, you can ignore this email." in received["text"]

    open_application_as_admin(pages, page, "Fjord Analytics AS")
    snapshot(page, "applications-admin-detail")
    page.get_by_label("Note to the applicant").fill("This year we partner with companies in Norway only.")
    page.get_by_role("button", name="Decline").click()
    expect(page.get_by_text("A decline is final.")).to_be_visible()  # asked first; nothing written yet
    snapshot(page, "applications-confirm-decline")
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and "/decision" in r.url else None)
    decline = page.get_by_role("button", name="Yes, decline")
    # People click twice when the server is slow: hold the write lock so the first request waits at the
    # portal while the second click, 150 ms later, sends the same form again. (Playwright's own click
    # waits for the pending navigation, so both clicks are made inside the page.)
    with stack.db.write():
        decline.evaluate("button => { button.click(); setTimeout(() => button.click(), 150); }")
        deadline = time.monotonic() + 5
        while len(posts) < 2 and time.monotonic() < deadline:
            page.wait_for_timeout(20)

    expect(page.locator(".flash-success")).to_contain_text("Declined. Ingrid Dahl will get an email about it.")
    expect(page.get_by_role("row", name=re.compile("Declined by Ada Admin"))).to_be_visible()
    assert len(posts) == 2, f"the double click sent {len(posts)} decision requests"

    first = pages.wait_for_email(APPLICANT, "About your TEEI partner application")
    assert "This year we partner with companies in Norway only." in first["text"]
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:  # a second email would arrive within this time: make sure none does
        assert len(emails_to(stack, APPLICANT, "About your TEEI partner application")) == 1
        time.sleep(0.25)
    with stack.db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM application_decisions")).scalar() == 1
    page.reload()
    expect(page.get_by_text("email sent").or_(page.get_by_text("email delivered")).first).to_be_visible()
    expect(page.get_by_role("button", name="Decline")).to_have_count(0)


def test_admin_approves_and_the_applicant_gets_an_accept_link(pages, page, stack):
    apply_as_a_company(page, stack, company="Lumen Retail")
    pages.wait_for_email(APPLICANT, "We received your partner application")
    # TEEI hears of it too, with a link straight to the application.
    notice = pages.wait_for_email("partners@teei.example", "New partner application from Lumen Retail")
    assert notice["reply_to"] == [APPLICANT]
    review = re.search(r"https?://\S+/admin/applications/\d+", notice["text"]).group(0)

    pages.sign_in(ADMIN, DEMO_PASSWORD)
    expect(page.locator(".nav-count")).to_have_text("1 new application")
    page.goto(review)
    expect(page.get_by_role("heading", level=1)).to_have_text("Lumen Retail")
    page.get_by_role("button", name="Approve and invite").click()
    page.get_by_role("button", name="Yes, approve and invite").click()
    expect(page.locator(".flash-success")).to_contain_text("Approved. Lumen Retail is a partner now")

    welcome = pages.wait_for_email(APPLICANT, "your partner application is approved")
    link = re.search(r"https?://\S+/invitations/accept/[\w-]+", welcome["text"])
    assert link and link.group(0).startswith(stack.url)
    expect(page.get_by_role("row", name=re.compile("Approved by Ada Admin"))).to_be_visible()
    with stack.db.read() as conn:
        managers_invited = conn.execute(
            sa.text(
                "SELECT COUNT(*) FROM invitations i JOIN companies c ON c.id = i.company_id "
                "WHERE c.name = 'Lumen Retail' AND i.role = 'manager' AND i.email = :e"
            ),
            {"e": APPLICANT},
        ).scalar()
    assert managers_invited == 1
    # The approved application leads to the company it created; the menu counts no new application.
    expect(page.locator(".nav-count")).to_have_count(0)
    snapshot(page, "applications-approved-detail")
    page.get_by_role("link", name="Lumen Retail: people, invitations and managers").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Lumen Retail")
    snapshot(page, "applications-approved-company")
