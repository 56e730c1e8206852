"""Issue 26, item 1, as a person meets it: a choice that is not offered (an old bookmark, an edited
link, a form tampered with) gets a message on that field, never an error page."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from portal.seed import DEMO_PASSWORD

MANAGER = "manager@northwind.example"
ADMIN = "admin@teei.example"
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "form-choices"


def shoot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{name} scrolls sideways at {width}"
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_a_list_filter_link_with_an_unknown_state_says_so(pages, page, stack):
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    for path, label in (("/invitations", "Invitation"), ("/people", "Show")):
        page.goto(f"{stack.url}{path}?state=archived")
        expect(page.locator("#state-error")).to_have_text("Choose one of the options offered.")
        expect(page.get_by_label(label)).to_have_attribute("aria-invalid", "true")
        shoot(page, path.strip("/") + "-unknown-state")


def test_a_tampered_bulk_action_is_a_field_error_on_the_console(pages, page, stack):
    page.goto(f"{stack.url}/password/forgot")  # one email in the outbox, so the list offers actions
    page.get_by_label("Email").fill(MANAGER)
    page.get_by_role("button", name="Send the link").click()
    pages.wait_for_email(MANAGER)
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/outbox/")
    chooser = page.get_by_label("Action on the emails that match")
    chooser.evaluate("select => { select.options[0].value = 'delete_everything'; select.selectedIndex = 0; }")
    page.get_by_role("button", name="Review").click()
    expect(page.locator("#action-error")).to_have_text("Error: Choose one of the options offered.")
    expect(page.get_by_role("heading", level=1)).not_to_have_text("Something went wrong")
    shoot(page, "console-unknown-action")
