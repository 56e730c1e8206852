import re

from playwright.sync_api import expect

from portal.seed import DEMO_PASSWORD


def test_demo_manager_signs_in_and_lands_on_the_report(pages, page):
    pages.sign_in("manager@northwind.example", DEMO_PASSWORD)
    expect(page.get_by_role("heading", level=1)).to_have_text("Volunteering report")
    expect(page.get_by_text("Northwind Logistics · hours measured")).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    assert page.url.endswith("/reports")


def test_wrong_password_shows_error_summary(pages, page):
    pages.sign_in("manager@northwind.example", "wrong-password")
    expect(page.get_by_role("alert")).to_contain_text("Wrong email or password")
    expect(page.get_by_label("Email")).to_have_value("manager@northwind.example")


def test_phone_width_layout_has_no_horizontal_scroll(pages, page):
    page.set_viewport_size({"width": 375, "height": 740})
    pages.sign_in("manager@northwind.example", DEMO_PASSWORD)
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0


def test_development_sign_in_page_lists_demo_logins_that_work(pages, page, new_context):
    from portal.core.programmes import BOOKING_URLS

    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{pages.base_url}/login")
        logins = page.get_by_role("region", name="Demo logins (development only)")
        expect(logins).to_contain_text("admin@teei.example")
        expect(logins).to_contain_text("manager@northwind.example")
        expect(logins).to_contain_text("olena@northwind.example")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=f"test-artifacts/sign-in-demo-logins-{width}.png", full_page=True)

    # The volunteer listed there signs in; with no sessions yet she is shown where to book one.
    for width in (1280, 390):
        volunteer = new_context(viewport={"width": width, "height": 900}).new_page()
        volunteer.goto(f"{pages.base_url}/login")
        volunteer.get_by_label("Email").fill("olena@northwind.example")
        volunteer.get_by_role("button", name="Continue").click()
        volunteer.get_by_label("Password").fill(DEMO_PASSWORD)
        volunteer.get_by_role("button", name="Sign in").click()
        expect(volunteer.get_by_role("heading", name="Book your first session")).to_be_visible()
        expect(volunteer.get_by_text("You volunteer with TEEI Language.")).to_be_visible()
        expect(volunteer.get_by_role("link", name=re.compile("^Book a")).first).to_have_text(
            "Book a TEEI Language session"
        )
        for name, url in (("TEEI Language", BOOKING_URLS["language"]), ("TEEI Mentorship", BOOKING_URLS["mentorship"])):
            expect(volunteer.get_by_role("link", name=f"Book a {name} session")).to_have_attribute("href", url)
        volunteer.screenshot(path=f"test-artifacts/my-hours-first-session-{width}.png", full_page=True)
        volunteer.context.close()
