"""The header, in Chromium: an admin's (the longest menu) is one row at 1280 px, in English and in
Norwegian, and wraps without scrolling sideways at 390 px."""

from __future__ import annotations

from playwright.sync_api import expect

from e2e.test_people import snapshot_widths
from portal.seed import DEMO_PASSWORD

ADMIN = "admin@teei.example"
# The middle of every item of the header's row, in px from the top of the page.
MIDDLES = """() => [...document.querySelectorAll('.header-row .brand, .header-row .nav > li, .header-row .language-switch')]
  .map(element => { const box = element.getBoundingClientRect(); return Math.round(box.top + box.height / 2); })"""


def header_rows(page) -> int:
    middles = sorted(page.evaluate(MIDDLES))
    rows = 1
    for above, below in zip(middles, middles[1:], strict=False):
        rows += below - above > 12
    return rows


def test_the_admin_header_is_one_row_at_1280_px_in_both_languages(pages, page, stack):
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/outbox")
    for language, switch_to in (("en", "Norsk"), ("nb", "English")):
        page.set_viewport_size({"width": 1280, "height": 800})
        assert header_rows(page) == 1, f"the {language} admin header wraps at 1280 px"
        snapshot_widths(page, f"admin-header-{language}")
        page.get_by_role("button", name=switch_to).click()
        expect(page.locator("html")).not_to_have_attribute("lang", language)
    page.set_viewport_size({"width": 390, "height": 800})
    assert header_rows(page) > 1, "on a phone the menu wraps (and the page does not scroll sideways)"
