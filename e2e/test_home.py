"""Public and admin pages of issue 26: the home page, the admin header, the
character counter and the unsubscribe page, in Chromium at 1280 and 390 px."""

from __future__ import annotations

import re
from pathlib import Path

import sqlalchemy as sa
from playwright.sync_api import expect

from portal.campaigns import operations as campaigns
from portal.campaigns.tokens import token_for
from portal.seed import DEMO_PASSWORD

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
ADMIN = "admin@teei.example"
MANAGER = "manager@northwind.example"
WIDTHS = (1280, 390)


def snapshot(page, name):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def at_each_width(page, name, check=None):
    """Screenshot the current page at 1280 and 390 px; at each, nothing scrolls sideways."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name} scrolls sideways at {width} px"
        if check:
            check(width)
        snapshot(page, f"{name}-{width}")
    page.set_viewport_size({"width": 1280, "height": 900})


def sign_in(page, url, email):
    page.goto(f"{url}/login")
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Continue").click()
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_a_visitor_learns_what_the_portal_is_and_finds_each_way_in(page, stack):
    page.goto(stack.url)
    expect(page.get_by_role("heading", level=1)).to_have_text("Your colleagues volunteer. TEEI counts the hours.")
    expect(page.get_by_text("TEEI Language and TEEI Mentorship").first).to_be_visible()
    main = page.locator("main")
    at_each_width(page, "home")
    for link, heading in (
        ("Go to sign in", "Sign in"),
        ("Apply to join", "Become a TEEI partner"),
        ("Ask for a demo", "Request a demo"),
    ):
        page.goto(stack.url)
        main.get_by_role("link", name=link).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(heading)

    # Signed in, / still leads to the person's own landing page.
    sign_in(page, stack.url, MANAGER)
    page.goto(stack.url)
    expect(page.get_by_role("heading", level=1)).to_have_text("Volunteering report")


def test_the_admin_header_fits_one_row_and_counts_new_applications(page, stack):
    with stack.db.write() as conn:
        for n in range(2):
            conn.execute(
                sa.text(
                    "INSERT INTO company_applications (company_name, company_key, contact_name, contact_email, "
                    "employee_count, created_at, updated_at) VALUES (:c, lower(:c), 'Kim', :e, 10, :t, :t)"
                ),
                {"c": f"Applicant {n}", "e": f"kim{n}@applicant.example", "t": "2026-12-01T10:00:00.000Z"},
            )
    page.set_viewport_size({"width": 1280, "height": 900})
    sign_in(page, stack.url, ADMIN)
    expect(page.get_by_role("heading", level=1)).to_have_text("Partner companies")
    menu = page.get_by_role("navigation", name="Main")
    applications = menu.get_by_role("link", name="Applications", exact=True)
    in_menu = menu.get_by_role("listitem").filter(has=page.get_by_role("link", name="Applications", exact=True))
    expect(in_menu).to_have_text("Applications2 new applications")
    expect(page.get_by_role("link", name="Outbox")).to_be_visible()

    def one_row(width):
        header = page.evaluate(
            """() => {
              const items = [...document.querySelectorAll('.site-header .nav > li')].map(li => li.getBoundingClientRect());
              const brand = document.querySelector('.brand').getBoundingClientRect();
              return {tops: items.map(r => Math.round(r.top)), brandTop: brand.top, brandBottom: brand.bottom,
                      navTop: Math.min(...items.map(r => r.top))};
            }"""
        )
        assert header["brandTop"] >= 8, f"the logo touches the top edge at {width} px: {header}"
        if width == 1280:
            assert max(header["tops"]) - min(header["tops"]) <= 4, f"the admin menu wraps at 1280 px: {header}"
            assert abs(header["navTop"] - header["brandTop"]) < 20, f"the menu sits below the logo: {header}"

    at_each_width(page, "admin-companies", one_row)

    page.get_by_label("Company name contains").fill("north")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_text("1 company matches “north”.")).to_be_visible()
    joined = page.get_by_role("row", name=re.compile("Northwind")).get_by_role("cell").nth(1).inner_text()
    assert re.fullmatch(r"\d{1,2} [A-Z][a-z]{2} \d{4}", joined), joined
    at_each_width(page, "admin-companies-search")
    page.get_by_role("link", name="Northwind Logistics").click()
    expect(page.locator(".lede")).to_have_text(f"Partner since {joined}")  # the same day on both pages
    page.go_back()

    applications.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Partner applications")
    at_each_width(page, "admin-applications")
    page.get_by_role("link", name="Outbox").click()  # the operator's console, from the admin menu
    expect(page.get_by_role("heading", level=1)).to_have_text("Outbox")


def test_long_text_fields_count_characters_and_the_server_still_refuses_too_many(page, stack, new_context):
    page.goto(f"{stack.url}/apply")
    message = page.get_by_label("Why would you like to partner with TEEI?")
    counter = page.locator("#message-count")
    expect(counter).to_have_text("You have 2,000 characters left")
    message.fill("Mentoring.")
    expect(counter).to_have_text("You have 1,990 characters left")
    # Pasted text is never cut short silently: the counter says by how much it is over.
    message.fill("x" * 2010)
    expect(counter).to_have_text("You have 10 characters too many")
    assert len(message.input_value()) == 2010
    page.get_by_label("Company name", exact=True).fill("Counter Co")
    page.get_by_label("Your name", exact=True).fill("Kim Count")
    page.get_by_label("Work email", exact=True).fill("kim@counter.example")
    page.get_by_label("Number of employees", exact=True).fill("12")
    at_each_width(page, "counter-over")
    page.get_by_role("button", name="Send application").click()
    expect(page.get_by_role("alert")).to_contain_text("Keep it under 2,000 characters.")
    expect(page.locator("#message-count")).to_have_text("You have 10 characters too many"), "what was typed is kept"

    # Without JavaScript the field still works: the browser's own limit applies, and no counter shows.
    plain = new_context(java_script_enabled=False).new_page()
    plain.goto(f"{stack.url}/apply")
    expect(plain.get_by_label("Why would you like to partner with TEEI?")).to_have_attribute("maxlength", "2000")
    expect(plain.locator(".char-count")).to_have_count(0)


def test_the_unsubscribe_page_names_the_address_and_shows_no_menu(page, stack):
    with stack.db.read() as conn:
        admin_id = conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": ADMIN}).scalar_one()
        olena_id = conn.execute(sa.text("SELECT id FROM users WHERE email = 'olena@northwind.example'")).scalar_one()
    campaign = campaigns.create_campaign(
        stack.db, admin_id=admin_id, name="Autumn", subject="Autumn at TEEI", body="News.", audience="all_managers"
    )
    page.goto(f"{stack.url}/unsubscribe/{token_for('e2e-secret-key', olena_id, campaign)}")
    expect(page.get_by_role("heading", level=1)).to_have_text("Your campaign emails")
    expect(page.locator("main")).to_contain_text("about its programmes to olena@northwind.example.")
    expect(page.get_by_role("navigation")).to_have_count(0)
    expect(page.get_by_role("link", name="Become a partner")).to_have_count(0)
    at_each_width(page, "unsubscribe")
    page.get_by_role("button", name="Unsubscribe from Programme news").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your campaign emails")
    expect(page.locator("#unsubscribe-state")).to_contain_text(
        "no more emails about Programme news at olena@northwind.example"
    )
    expect(page.get_by_role("navigation")).to_have_count(0)
    at_each_width(page, "unsubscribed")


def test_report_emails_cards_do_not_touch(page, stack):
    sign_in(page, stack.url, MANAGER)
    page.goto(f"{stack.url}/reports/subscription")
    gaps = page.evaluate(
        """() => {
          const cards = [...document.querySelectorAll('main .card')].map(c => c.getBoundingClientRect());
          return cards.slice(1).map((c, i) => c.top - cards[i].bottom);
        }"""
    )
    assert gaps and all(gap >= 16 for gap in gaps), f"cards on Report emails are {gaps} px apart"
    at_each_width(page, "report-emails-cards")
