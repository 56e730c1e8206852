"""A Norwegian manager's main journey, in Norwegian: a browser that asks for Norwegian signs in,
invites a colleague (the invitation email is written in Norwegian), reads the report with
Norwegian numbers and dates, and downloads the filing PDF in Norwegian. axe audits every page."""

from __future__ import annotations

import io
import re

from playwright.sync_api import expect
from pypdf import PdfReader

from e2e.screenshots import shoot
from e2e.test_reports import ARTIFACTS, add_last_quarter_sessions
from portal.core import i18n
from portal.seed import DEMO_PASSWORD
from tests.reports.conftest import shown_hours

MANAGER = "manager@northwind.example"


def nb(message: str, **values) -> str:
    return i18n.translate("nb", message, **values)


def test_a_norwegian_manager_invites_reads_and_files_in_norwegian(new_context, stack):
    minutes, sessions, volunteers = add_last_quarter_sessions(stack.db)
    page = new_context(locale="nb-NO").new_page()
    page.goto(f"{stack.url}/login")
    expect(page.locator("html")).to_have_attribute("lang", "nb")
    page.get_by_label(nb("Email")).fill(MANAGER)
    page.get_by_role("button", name=nb("Continue")).click()
    page.get_by_label(nb("Password")).fill(DEMO_PASSWORD)
    page.get_by_role("button", name=nb("Sign in")).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(nb("Volunteering report"))

    # The invitation: the form offers the email in Norwegian, the page's language.
    page.get_by_role("link", name=nb("Invitations"), exact=True).click()
    page.get_by_role("link", name=nb("Invite colleagues")).first.click()
    page.get_by_label(nb("Email addresses")).fill("ola@northwind.example")
    page.get_by_label("TEEI Language").check()
    page.get_by_role("button", name=nb("Send invitations")).click()
    expect(page.get_by_role("status")).to_be_visible()
    email = _email_to(stack, "ola@northwind.example")
    assert email["subject"] != "Northwind Logistics invites you to volunteer with TEEI Language"
    assert "Northwind Logistics" in email["subject"]
    assert 'lang="nb"' in email["html"]

    # The report of last quarter, its figures as Norwegian writes them.
    page.goto(f"{stack.url}/reports")
    page.get_by_role("link", name=nb("Last quarter"), exact=True).click()
    # Computed apart from the portal: "1,234.50" in English is "1 234,50" in Norwegian.
    norwegian_hours = shown_hours(minutes).replace(",", "\u00a0").replace(".", ",")
    expect(page.locator("#figure-hours")).to_have_text(norwegian_hours)
    expect(page.locator("#figure-sessions")).to_have_text(str(sessions))
    ARTIFACTS.mkdir(exist_ok=True)
    shoot(page, ARTIFACTS, "norwegian-report")

    with page.expect_download() as download:
        page.get_by_role("link", name=re.compile(nb("PDF for filing"))).click()
    pdf = open(download.value.path(), "rb").read()
    (ARTIFACTS / "report-nb.pdf").write_bytes(pdf)
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages).split())
    assert norwegian_hours.replace("\u00a0", " ") in text.replace("\u00a0", " ")
    assert nb("Verified hours") in text and "Verified hours" not in text


def _email_to(stack, address, timeout=30.0):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for email in stack.model.sent():
            if address in email["to"]:
                return email
        time.sleep(0.2)
    raise AssertionError(f"no email to {address} within {timeout}s")
