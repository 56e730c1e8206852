"""TEEI's partners overview and its read-only view of a company's report, in a real browser (issue 47, item 4)."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from e2e.test_campaigns import add_company_of_three
from e2e.test_people import snapshot_widths
from portal.seed import DEMO_PASSWORD, seed_demo

ADMIN = "admin@teei.example"


def test_teei_reads_its_partners_figures_and_a_companys_report_read_only(pages, page, stack):
    seed_demo(stack.db, secret_key=stack.secret_key, history=True)  # a year of Northwind's sessions
    add_company_of_three(stack)  # a partner with no sessions yet
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Companies").click()
    page.get_by_role("link", name="Partners overview: hours and trends").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Partners overview")
    northwind = page.get_by_role("row", name=re.compile("Northwind Logistics"))
    expect(northwind).to_contain_text(re.compile(r"(Up|Down|Flat)"))  # the trend in words, not colour alone
    rows = page.locator("#partners tbody tr")
    expect(rows.first).to_contain_text("Northwind Logistics")  # most hours first
    expect(page.locator("#definitions")).to_contain_text("in the last 90 days")
    snapshot_widths(page, "admin-partners")

    page.get_by_label("Order by").select_option("name")
    page.get_by_role("button", name="Sort").click()
    names = [n.strip() for n in page.locator("#partners tbody tr td:first-child").all_inner_texts()]
    assert names == sorted(names, key=str.casefold), names

    page.get_by_role("link", name="View report of Northwind Logistics").click()
    expect(page.locator("#read-only-banner")).to_contain_text(
        "Viewing Northwind Logistics's report as TEEI (read-only)"
    )
    expect(page.get_by_role("link", name="Settings and year close")).to_have_count(0)
    expect(page.get_by_role("link", name="CSV")).to_have_count(0)
    expect(page.locator("#no-names")).to_be_visible()
    snapshot_widths(page, "admin-company-report")
    page.get_by_role("link", name="Last month", exact=True).click()  # a quick period stays read-only
    expect(page.locator("#read-only-banner")).to_be_visible()
    assert "/admin/companies/" in page.url
