"""A volunteer gets the certificate they are proud of (issue 47, item 9): from My hours to a small
form (this year so far, or a period they choose; a wrong date is answered on its field), to a
one-page PDF with their hours, whose ID and link anyone they show it to can check."""

from __future__ import annotations

import io
import re
from datetime import datetime

import sqlalchemy as sa
from playwright.sync_api import expect
from pypdf import PdfReader

from e2e.screenshots import ARTIFACTS, shoot
from portal.seed import DEMO_PASSWORD, seed_demo
from tests.reports.conftest import OSLO, shown_hours

SHOTS = ARTIFACTS / "certificate"
VOLUNTEER = "olena@northwind.example"
CERTIFICATE_ID = re.compile(r"TEEI-C-\d{8}-\d{8}-[0-9A-F]{10}")


def attended_this_year(db) -> tuple[int, int]:
    """Olena's attended minutes and sessions this year (local days), counted apart from the portal's code."""
    year = datetime.now(OSLO).year
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT a.held_at, a.minutes FROM attendance_sessions a JOIN users u ON u.id = a.user_id "
                "WHERE u.email = :email AND a.status = 'attended'"
            ),
            {"email": VOLUNTEER},
        ).all()
    kept = [m for held, m in rows if datetime.fromisoformat(held.replace("Z", "+00:00")).astimezone(OSLO).year == year]
    return sum(kept), len(kept)


def test_a_volunteer_downloads_a_certificate_anyone_can_check(pages, page, stack, new_context):
    seed_demo(stack.db, secret_key=stack.secret_key)  # the demo people's weekly sessions, up to now
    minutes, sessions = attended_this_year(stack.db)
    assert sessions, "the demo volunteer has sessions this year"
    pages.sign_in(VOLUNTEER, DEMO_PASSWORD)
    page.goto(f"{stack.url}/me/hours")
    page.get_by_role("link", name="Download my certificate (PDF)").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your volunteering certificate")
    year = datetime.now(OSLO).year
    expect(page.get_by_label("From", exact=True)).to_have_value(f"01.01.{year}")
    shoot(page, SHOTS, "form")

    # A period that ends before it starts: the error is on the field, and in the summary above.
    page.get_by_label("From", exact=True).fill(f"31.12.{year}")
    page.get_by_label("To", exact=True).fill(f"01.01.{year}")
    page.get_by_role("button", name="Download the certificate (PDF)").click()
    expect(page.locator(".error-summary")).to_contain_text("The end of the period must be on or after its start.")
    expect(page.get_by_label("To", exact=True)).to_have_attribute("aria-invalid", "true")
    assert page.title().startswith("Error:")
    shoot(page, SHOTS, "form-error")

    page.get_by_label("From", exact=True).fill(f"01.01.{year}")
    page.get_by_label("To", exact=True).fill(datetime.now(OSLO).strftime("%d.%m.%Y"))
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the certificate (PDF)").click()
    body = open(download.value.path(), "rb").read()
    (SHOTS / "certificate.pdf").write_bytes(body)  # rendered to an image for a person to look at
    pdf = PdfReader(io.BytesIO(body))
    text = " ".join(" ".join(p.extract_text() for p in pdf.pages).split())
    assert len(pdf.pages) == 1
    assert "Olena Kovalenko" in text and "of Northwind Logistics" in text
    noun = "session" if sessions == 1 else "sessions"
    assert f"volunteered {shown_hours(minutes)} hours in {sessions} attended {noun} between 1 Jan {year}" in text
    (certificate_id,) = set(CERTIFICATE_ID.findall(text))

    reader = new_context().new_page()  # whoever the certificate is shown to, with no account
    reader.goto(f"{stack.url}/verify/{certificate_id}")
    expect(reader.get_by_role("heading", level=1)).to_have_text(f"Certificate {certificate_id} was issued by TEEI")
    expect(reader.locator("#verify-name")).to_have_text("Olena Kovalenko")
    expect(reader.locator("#verify-hours")).to_have_text(shown_hours(minutes))
    expect(reader.locator("#verify-sessions")).to_have_text(str(sessions))
    shoot(reader, SHOTS, "verify")
