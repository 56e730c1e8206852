"""Pausing and resuming sending from the console, in Chromium: the admin says why, the Sending box
then says what is paused, by whom, since when and why, and the resume asks why too."""

from __future__ import annotations

from playwright.sync_api import expect

from e2e.screenshots import ARTIFACTS, WIDTHS, shoot
from portal.seed import DEMO_PASSWORD

ADMIN = "admin@teei.example"
SHOTS = ARTIFACTS / "console"


def test_an_admin_pauses_campaigns_with_a_reason_and_resumes_them(pages, page, stack):
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/outbox")
    sending = page.get_by_role("region", name="Sending")
    expect(sending).to_contain_text("Emails are being sent.")

    sending.get_by_role("button", name="Pause sending").click()  # no reason: refused, nothing paused
    expect(page.get_by_role("alert")).to_contain_text("Say why")
    expect(page.get_by_role("region", name="Sending")).not_to_contain_text("Paused:")

    sending = page.get_by_role("region", name="Sending")
    sending.get_by_label("What to pause").select_option("campaign")
    sending.get_by_label("Reason", exact=True).fill("Newsletter sent to the wrong list")
    sending.get_by_role("button", name="Pause sending").click()
    expect(page.get_by_role("status").first).to_contain_text(
        "Paused: campaign emails. Every request already out has been answered"
    )
    sending = page.get_by_role("region", name="Sending")
    expect(sending).to_contain_text("Paused: campaign emails.")
    expect(sending).to_contain_text(f"By {ADMIN}")
    expect(sending).to_contain_text("Why: “Newsletter sent to the wrong list”")
    shoot(page, SHOTS, "sending-paused")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"scrolls sideways at {width}"
    page.set_viewport_size({"width": 1100, "height": 800})

    sending.get_by_label("Reason for resuming").fill("List corrected")
    sending.get_by_role("button", name="Resume").click()
    expect(page.get_by_role("status").first).to_contain_text("Sending is resumed")
    expect(page.get_by_role("region", name="Sending")).to_contain_text("Emails are being sent.")
