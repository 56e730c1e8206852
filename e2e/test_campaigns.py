"""An admin writes a campaign to one company's three people, confirms the reach, and sends it; one
of them unsubscribes from the mail viewer with one click, and the next campaign's preview leaves
them out and says so (one click stops the campaign's topic; the preference page saves the rest). A draft is edited, duplicated and scheduled in Oslo time."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import expect

from e2e.keyboard import KeyboardUser
from portal.auth.operations import create_user
from portal.seed import DEMO_PASSWORD

ADMIN = "admin@teei.example"
COMPANY = "Fjord Analytics AS"
PEOPLE = ("kari@fjord.example", "lars@fjord.example", "nina@fjord.example")
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "campaigns"


def add_company_of_three(stack):
    create_user(stack.db, email=PEOPLE[0], password=DEMO_PASSWORD, role="manager", company=COMPANY, name="Kari")
    for email, name in zip(PEOPLE[1:], ("Lars", "Nina"), strict=True):
        create_user(stack.db, email=email, password=DEMO_PASSWORD, role="employee", company=COMPANY, name=name)


def shoot(page, name, widths=(1280, 390)):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in widths:
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{name} scrolls sideways at {width}"
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def compose(page, name, subject, body):
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Campaigns").click()
    page.get_by_role("link", name="New campaign").click()
    page.get_by_label("Name (for admins only)").fill(name)
    page.get_by_label("Subject", exact=True).fill(subject)
    page.get_by_label("Audience").select_option(label=f"{COMPANY}: managers and volunteers")
    page.get_by_label("Body (Markdown)", exact=True).fill(body)
    page.get_by_role("button", name="Save and preview").click()


def test_admin_sends_a_campaign_and_a_recipient_unsubscribes_in_one_click(pages, page, stack):
    add_company_of_three(stack)
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/campaigns/new")
    page.get_by_role("button", name="Save and preview").click()
    expect(page.get_by_role("alert")).to_contain_text("Write a subject.")
    shoot(page, "campaign-new-errors")
    compose(page, "Autumn news", "Autumn at TEEI", "## New sessions\n\nRead [the programme](https://teei.org).")
    expect(page.get_by_role("heading", level=1)).to_have_text("Autumn news")
    expect(page.locator("#preview").get_by_role("heading", name="New sessions")).to_be_visible()
    expect(page.locator("#reach")).to_contain_text("3 recipients")
    expect(page.locator("#reach")).to_contain_text("Nobody is left out")
    shoot(page, "campaign-draft")

    page.get_by_role("button", name="Send me a test").click()
    expect(page.get_by_text(f"A test copy is on its way to {ADMIN}")).to_be_visible()
    pages.wait_for_email(ADMIN, "[Test] Autumn at TEEI")

    page.get_by_role("button", name="Send campaign…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Send to 3 people?")
    expect(page.locator("#confirm-when")).to_have_text("Now")
    shoot(page, "campaign-confirm-send")
    page.get_by_role("button", name="Yes, send to 3 people").click()
    expect(page.get_by_text("Sending to 3 people")).to_be_visible()
    emails = {to: pages.wait_for_email(to, "Autumn at TEEI") for to in PEOPLE}
    page.reload()
    expect(page.locator("#progress")).to_contain_text("Sent to 3 of 3")
    expect(page.get_by_role("button", name="Send campaign…")).to_have_count(0)
    shoot(page, "campaign-sent")

    page.goto(f"{stack.model.url}/view/{emails[PEOPLE[1]]['id']}")
    expect(page.get_by_text("List-Unsubscribe-Post: List-Unsubscribe=One-Click")).to_be_visible()
    shoot(page, "campaign-mail-viewer", widths=(1280,))  # the dev tool's viewer is desktop-only
    page.get_by_role("button", name=re.compile("Unsubscribe \\(one click")).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your campaign emails")
    expect(page.locator("#unsubscribe-state")).to_contain_text("no more emails about Programme news")
    expect(page.get_by_label("Programme news")).not_to_be_checked()
    expect(page.get_by_label("Events")).to_be_checked()
    shoot(page, "unsubscribed")
    page.get_by_label("Events").uncheck()  # the switches work without JavaScript: a plain form
    page.get_by_role("button", name="Save my choices").click()
    expect(page.locator("#unsubscribe-state")).to_contain_text("Saved.")
    expect(page.get_by_label("Events")).not_to_be_checked()
    expect(page.get_by_label("Partner news")).to_be_checked()
    shoot(page, "preferences-saved")

    page.goto(f"{stack.url}/admin/campaigns")
    compose(page, "Winter news", "Winter at TEEI", "Hello again.")
    expect(page.locator("#reach")).to_contain_text("2 recipients")
    expect(page.locator("#reach")).to_contain_text("1 left out: 1 unsubscribed, 0 suppressed")
    page.get_by_role("link", name="All campaigns").click()
    shoot(page, "campaign-list")


def test_a_keyboard_user_composes_and_sends_a_campaign(pages, page, stack):
    add_company_of_three(stack)
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/campaigns/new")
    keyboard = KeyboardUser(page)
    keyboard.skip_to_content()
    keyboard.fill("Name (for admins only)", "Keyboard news")
    keyboard.fill("Subject", "Typed at TEEI")
    keyboard.tab_to("Audience")
    page.keyboard.type("Fjord")
    keyboard.fill("Body (Markdown)", "Typed *without* a mouse.")
    keyboard.activate("Save and preview")
    expect(page.locator("#reach")).to_contain_text("3 recipients")

    keyboard.activate("Send campaign…")
    expect(page.get_by_role("heading", level=1)).to_have_text("Send to 3 people?")
    keyboard.activate("Yes, send to 3 people")
    expect(page.get_by_text("Sending to 3 people")).to_be_visible()
    pages.wait_for_email(PEOPLE[2], "Typed at TEEI")


def test_an_admin_edits_duplicates_and_schedules_a_draft_in_oslo_time(pages, page, stack):
    add_company_of_three(stack)
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/campaigns/new")
    page.get_by_label("Name (for admins only)").fill("Christmas news")
    page.get_by_label("Subject", exact=True).fill("Christmas at TEEI")
    page.get_by_label("Body (Markdown)", exact=True).fill("Merry *Christmas*.")
    page.get_by_role("button", name="Save and preview").click()
    expect(page.locator("#audience-error")).to_have_text(
        "Error: Choose an audience."
    )  # "Error:" for screen readers (GOV.UK)
    (
        expect(page.get_by_label("Body (Markdown)", exact=True)).to_have_value("Merry *Christmas*."),
        "what was typed is kept",
    )
    page.get_by_label("Audience").select_option(label=f"{COMPANY}: managers and volunteers")
    page.get_by_role("button", name="Save and preview").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Christmas news")
    shoot(page, "campaign-draft-tools")

    page.get_by_role("link", name="Edit draft").click()
    expect(page.get_by_label("Subject", exact=True)).to_have_value("Christmas at TEEI")
    page.get_by_label("Subject", exact=True).fill("Christmas greetings from TEEI")
    shoot(page, "campaign-edit")
    page.get_by_role("button", name="Save draft").click()
    expect(page.get_by_text("Draft saved.")).to_be_visible()
    expect(page.locator("#preview").locator("xpath=..")).to_contain_text("Christmas greetings from TEEI")

    page.get_by_label("Send at (optional)").fill("24.12.2030 00:30")
    page.get_by_role("button", name="Send campaign…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Schedule for 3 people?")
    expect(page.locator("#confirm-when")).to_have_text("24 Dec 2030, 00:30 CET")
    shoot(page, "campaign-confirm-schedule")
    page.get_by_role("button", name="Yes, schedule it").click()
    expect(page.get_by_text("Scheduled for 24 Dec 2030, 00:30 CET")).to_be_visible()
    expect(page.locator("#schedule")).to_contain_text("24 Dec 2030, 00:30 CET")
    shoot(page, "campaign-scheduled")

    page.get_by_role("button", name="Duplicate").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Copy of Christmas news")
    expect(page.locator("#campaign-status")).to_have_text("Draft")
    page.get_by_role("link", name="All campaigns").click()
    expect(page.get_by_role("row", name=re.compile("^Christmas news"))).to_contain_text("for 24 Dec 2030, 00:30 CET")
    shoot(page, "campaign-list-scheduled")


def test_html_in_a_body_is_flagged_and_back_after_sending_asks_nothing(pages, page, stack):
    """Typed HTML shows as text, and the preview says so before anyone gets it; after "Yes, send"
    the browser's Back comes to pages a GET shows (redirect after POST, a 303), never to "Confirm
    form resubmission", and sends nothing twice."""
    add_company_of_three(stack)
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/campaigns")
    compose(page, "Spring news", "Spring at TEEI", "Hello <b>everyone</b>.\n\nSee you soon.")
    warning = page.locator(".raw-html-warning")
    expect(warning).to_contain_text("This text holds HTML tags. The email shows them as text")
    expect(page.locator("#preview")).to_contain_text("Hello <b>everyone</b>.")
    shoot(page, "campaign-raw-html")

    page.get_by_role("button", name="Send campaign…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Send to 3 people?")
    with page.expect_response(lambda answer: answer.request.method == "POST") as posted:
        page.get_by_role("button", name="Yes, send to 3 people").click()
    assert posted.value.status == 303, "redirect after POST"
    expect(page.get_by_text("Sending to 3 people")).to_be_visible()
    for to in PEOPLE:
        pages.wait_for_email(to, "Spring at TEEI")

    requests = []
    page.on("request", lambda request: requests.append(request.method))
    page.go_back()  # to the confirmation, a GET: the campaign is no longer a draft, so its page
    expect(page.get_by_role("heading", level=1)).to_have_text("Spring news")
    expect(page.get_by_role("button", name="Send campaign…")).to_have_count(0)
    assert "POST" not in requests, "Back posted a form again"
    assert len([e for e in stack.model.sent() if e["subject"] == "Spring at TEEI"]) == 3, "sent once"
