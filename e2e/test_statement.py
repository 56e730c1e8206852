"""The accessibility statement and the privacy notice, reached from any page's footer (issue 47,
item 10), looked at on a phone and a desktop."""

from __future__ import annotations

from playwright.sync_api import expect

from e2e.screenshots import ARTIFACTS, shoot

SHOTS = ARTIFACTS / "statement"


def test_a_visitor_finds_the_statement_the_privacy_notice_and_the_contact_in_the_footer(pages, page):
    page.goto(f"{pages.base_url}/apply")
    footer = page.get_by_role("contentinfo")
    expect(footer.get_by_role("link", name="Contact")).to_have_attribute("href", "mailto:sales@teei.example")
    footer.get_by_role("link", name="Accessibility statement").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Accessibility statement for the TEEI Partner Portal")
    expect(page.get_by_text("partially compliant with the Web Content Accessibility Guidelines")).to_be_visible()
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    shoot(page, SHOTS, "accessibility-statement")
    page.get_by_role("contentinfo").get_by_role("link", name="Privacy notice").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Privacy notice")
    expect(page.get_by_text("after 365 days").first).to_be_visible()
    shoot(page, SHOTS, "privacy-notice")
