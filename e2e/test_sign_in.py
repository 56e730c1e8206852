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
    expect(page.get_by_role("alert")).to_contain_text("do not match an account")
    expect(page.get_by_label("Email")).to_have_value("manager@northwind.example")


def test_phone_width_layout_has_no_horizontal_scroll(pages, page):
    page.set_viewport_size({"width": 375, "height": 740})
    pages.sign_in("manager@northwind.example", DEMO_PASSWORD)
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
