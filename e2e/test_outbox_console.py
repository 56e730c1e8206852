"""The operator's console in Chromium: an email whose outcome became unknown is found, checked with
the provider, confirmed as sent with a reason, and the history shows who did it and why; and one
action by keyboard alone."""

from __future__ import annotations

import re
import time

import sqlalchemy as sa
from playwright.sync_api import expect

from e2e.keyboard import KeyboardUser
from e2e.screenshots import ARTIFACTS, shoot
from e2e.test_people import snapshot_widths
from portal.core import clock
from portal.core.settings import Settings
from portal.email_families import FAMILIES
from portal.outbox import EmailIntent
from portal.outbox.write.intents import add_outbox_rows
from portal.seed import DEMO_PASSWORD

ADMIN = "admin@teei.example"
SHOTS = ARTIFACTS / "console"


def wait_for_row(db, where: str, timeout: float = 30.0, **params) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with db.read() as conn:
            row = conn.execute(sa.text(f"SELECT * FROM email_outbox WHERE {where}"), params).mappings().first()
        if row is not None:
            return dict(row)
        time.sleep(0.05)
    with db.read() as conn:
        rows = [
            tuple(r) for r in conn.execute(sa.text("SELECT id, status, last_error, attempt_count FROM email_outbox"))
        ]
    raise AssertionError(f"no outbox row where {where} within {timeout}s: {rows}")


def test_an_unknown_outcome_is_confirmed_as_sent_with_a_reason(pages, page, stack):
    # The provider takes the email but its answers are lost, and its receipts are held up.
    stack.model.pause_receipts()
    stack.model.fail_next("drop_after_accept", count=2)
    page.goto(f"{stack.url}/password/forgot")
    page.get_by_label("Email").fill("manager@northwind.example")
    page.get_by_role("button", name="Send the link").click()

    row = wait_for_row(stack.db, "family = 'password_reset' AND status = 'retry' AND outcome_unknown = 1")
    with stack.db.write() as conn:  # a day passes: the provider's idempotency window is over
        conn.execute(
            sa.text("UPDATE email_outbox SET first_attempt_at = :then, next_attempt_at = :now WHERE id = :id"),
            {"id": row["id"], "then": clock.iso_in(-86400 - 600), "now": clock.now_iso()},
        )
    wait_for_row(stack.db, "id = :id AND status = 'dead_letter'", id=row["id"])
    assert len(stack.model.sent()) == 1, "the email went out once; the portal does not know it"

    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.get_by_role("link", name="Outbox").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Outbox")
    page.get_by_role("link", name=re.compile(r"1 password reset email dead letter")).click()
    listed = page.get_by_role("row", name=re.compile(row["id"]))
    expect(listed).to_contain_text("outcome unknown")
    shoot(page, SHOTS, "console-list")

    listed.get_by_role("link").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Password reset email")
    expect(page.locator("#not-retried")).to_contain_text("It cannot be retried: the provider may already have sent it")
    snapshot_widths(page, "console-cannot-retry")
    page.get_by_role("button", name="Ask the provider").click()
    (sent,) = stack.model.sent()
    expect(page.get_by_role("status")).to_contain_text("The provider has this email")
    expect(page.get_by_label("Provider message ID (optional)")).to_have_value(sent["id"])
    page.get_by_label("Reason").fill("The provider has it: delivered on the first attempt")
    shoot(page, SHOTS, "console-decide")
    page.get_by_role("button", name="Confirm it was sent").click()

    expect(page.get_by_role("status").first).to_contain_text("recorded as sent")
    history = page.locator(".timeline")
    expect(history).to_contain_text("Confirmed as sent by an operator")
    expect(history).to_contain_text(f"by {ADMIN}")
    expect(history).to_contain_text("The provider has it: delivered on the first attempt")
    expect(history).to_contain_text("Dead letter: needs a person")
    shoot(page, SHOTS, "console-timeline")
    with stack.db.read() as conn:
        settled = conn.execute(
            sa.text("SELECT status, provider_message_id FROM email_outbox WHERE id = :id"), {"id": row["id"]}
        ).one()
    assert tuple(settled) == ("sent", sent["id"])
    assert len(stack.model.sent()) == 1, "confirming sends nothing"


def failed_email(stack, portal_env, recipient: str, key: str, family: str = "notice", data: dict | None = None) -> str:
    """An email the provider refused (a 422): nothing went out, so it may be retried."""
    data = data or {"subject": "Hi", "body": "Hello."}
    with stack.db.write() as conn:
        (outbox_id,) = add_outbox_rows(
            conn,
            [EmailIntent(FAMILIES[family], recipient, key, data)],
            Settings.from_env(portal_env),
            now=clock.utcnow(),
        )
        conn.execute(
            sa.text(
                "UPDATE email_outbox SET status = 'failed', attempt_count = 1, first_attempt_at = :now, "
                "last_error = 'provider_rejected: 422 validation_error' WHERE id = :id"
            ),
            {"id": outbox_id, "now": clock.now_iso()},
        )
    return outbox_id


def test_a_failed_email_is_retried_by_keyboard(page, stack, portal_env):
    # A campaign email: its preview holds a link (unsubscribe) that Tab reaches inside the frame.
    news = {"campaign_id": 1, "subject": "Winter news", "body": "Hello **everyone**.", "user_id": 4}
    outbox_id = failed_email(stack, portal_env, "rejected@northwind.example", "e2e:campaign:1", "campaign", news)

    keys = KeyboardUser(page)
    page.goto(f"{stack.url}/login")
    keys.skip_to_content()
    keys.fill("Email", ADMIN)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    keys.fill("Password", DEMO_PASSWORD)  # the address's next step
    with page.expect_navigation():
        page.keyboard.press("Enter")
    keys.activate("Outbox")
    keys.skip_to_content()
    keys.activate(re.compile(f"campaign email {outbox_id}"))
    keys.fill("Reason", "The template is fixed")
    # The page then shows the email while it is being sent, alone or in a batch of one.
    stack.model.fail_next("slow_accept", delay=10.0)
    stack.model.fail_next("slow_accept", delay=10.0, path="/emails/batch")
    keys.activate("Try sending it again")
    expect(page.get_by_role("status").first).to_contain_text("tried again")
    frozen = "EXISTS (SELECT 1 FROM email_frozen_payloads f WHERE f.outbox_id = email_outbox.id)"
    wait_for_row(stack.db, f"id = :id AND status = 'processing' AND {frozen}", id=outbox_id)
    page.reload()
    # Tab passes over a frame still loading: walk once the email is in it.
    preview = page.frame_locator("iframe.email-frame")
    expect(preview.get_by_role("link", name="Choose the topics you get, or unsubscribe")).to_be_visible()
    stops = keys.assert_no_trap()
    # Tab goes into the email's own links and out again, and shows where it is in there too.
    walked = [f"{stop['name']} (in the frame)" if stop.get("frame") else stop["name"] for stop in stops]
    assert "Choose the topics you get, or unsubscribe (in the frame)" in walked, " → ".join(walked)
    wait_for_row(stack.db, "id = :id AND status IN ('sent', 'delivered')", id=outbox_id)
    assert [e["to"] for e in stack.model.sent()] == [["rejected@northwind.example"]]


def test_failed_emails_are_retried_together_after_confirming_the_count(pages, page, stack, portal_env):
    ids = [failed_email(stack, portal_env, f"refused{n}@northwind.example", f"e2e:bulk:{n}") for n in range(2)]
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/outbox/?status=failed")
    page.get_by_label("Action on the emails that match").select_option("retry")
    page.get_by_role("button", name="Review").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Retry: 2 emails?")
    page.get_by_label("Reason").fill("The provider's validation rule was fixed")
    shoot(page, SHOTS, "console-bulk-confirm")
    page.get_by_role("button", name="Retry: 2 emails").click()
    expect(page.get_by_role("status").first).to_contain_text("Retry: 2 emails")
    for outbox_id in ids:
        wait_for_row(stack.db, "id = :id AND status IN ('sent', 'delivered')", id=outbox_id)
    assert sorted(e["to"][0] for e in stack.model.sent()) == [
        "refused0@northwind.example",
        "refused1@northwind.example",
    ]


def test_an_invitation_sent_in_a_batch_shows_its_batch_and_requests(pages, page, stack):
    """A manager invites three colleagues at once: their invitations ride in one provider request.
    The provider answers the first with a 500; the retry sends the same list under the same key."""
    stack.model.fail_next("http_500", path="/emails/batch")
    pages.sign_in("manager@northwind.example", DEMO_PASSWORD)
    page.goto(f"{stack.url}/invitations/new")
    page.get_by_label("Email addresses").fill("dag@northwind.example\neva@northwind.example\nfin@northwind.example")
    page.get_by_label("TEEI Language").check()
    page.get_by_role("button", name="Send invitations").click()
    expect(page.get_by_role("status")).to_contain_text("Invited 3 colleagues")
    row = wait_for_row(stack.db, "recipient = 'eva@northwind.example' AND status IN ('sent', 'delivered')")
    batch_requests = [entry for entry in stack.model.requests() if entry["path"] == "/emails/batch"]
    assert [entry["status"] for entry in batch_requests] == [500, 200]
    assert len({entry["idempotency_key"] for entry in batch_requests}) == 1
    assert sorted(email["to"][0] for email in stack.model.sent()) == [
        "dag@northwind.example",
        "eva@northwind.example",
        "fin@northwind.example",
    ]

    page.get_by_role("button", name="Sign out").click()
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/outbox/{row['id']}")
    section = page.get_by_role("region", name="Sent in a batch")
    expect(section).to_contain_text("one provider request with 2 others")
    requests = page.get_by_role("table", name="Requests")
    expect(requests.get_by_role("row")).to_have_count(3)
    expect(requests).to_contain_text("500: provider_error")
    expect(requests).to_contain_text("accepted: 3 message IDs")
    shoot(page, SHOTS, "console-batch")


def test_an_email_waiting_for_its_retry_is_shown_as_its_recipient_sees_it(pages, page, stack, portal_env):
    """The provider answers 500: the email waits for its retry with its content frozen, and its page
    shows that content in a sandboxed frame (the retry is pushed back so the page is seen first)."""
    stack.model.fail_next("http_500")
    with stack.db.write() as conn:
        (outbox_id,) = add_outbox_rows(
            conn,
            [
                EmailIntent(
                    FAMILIES["notice"],
                    "lena@northwind.example",
                    "e2e:frame:1",
                    {
                        "subject": "Your first session",
                        "body": "Hello Lena.\n\nYour first session is on Monday at 18:00.",
                    },
                )
            ],
            Settings.from_env(portal_env),
            now=clock.utcnow(),
        )
    wait_for_row(stack.db, "id = :id AND status = 'retry'", id=outbox_id)
    with stack.db.write() as conn:
        conn.execute(
            sa.text("UPDATE email_outbox SET next_attempt_at = :later WHERE id = :id"),
            {"id": outbox_id, "later": clock.iso_in(3600)},
        )
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/outbox/{outbox_id}")
    section = page.get_by_role("region", name="The email")
    expect(section).to_contain_text("Your first session")
    frame = page.frame_locator("iframe.email-frame")
    expect(frame.get_by_text("Your first session is on Monday at 18:00.")).to_be_visible()
    assert page.locator("iframe.email-frame").get_attribute("sandbox") == ""  # no scripts, no forms, no same origin
    shoot(page, SHOTS, "console-email")
    page.locator("iframe.email-frame").scroll_into_view_if_needed()
    page.locator("iframe.email-frame").screenshot(path=str(SHOTS / "console-email-frame.png"))


def test_an_email_held_by_a_pause_shows_its_subject_and_what_it_waits_for(pages, page, stack):
    """An admin pauses password resets; a reset asked meanwhile waits. The list names it by its
    subject and says it is paused; its page says by whom and why, every time in one stated zone."""
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/outbox")
    sending = page.get_by_role("region", name="Sending")
    sending.get_by_label("What to pause").select_option("password_reset")
    sending.get_by_label("Reason", exact=True).fill("Checking the reset template")
    sending.get_by_role("button", name="Pause sending").click()
    expect(page.get_by_role("status").first).to_contain_text("Paused: password reset emails.")
    page.get_by_role("button", name="Sign out").click()

    page.goto(f"{stack.url}/password/forgot")
    page.get_by_label("Email").fill("manager@northwind.example")
    page.get_by_role("button", name="Send the link").click()
    row = wait_for_row(stack.db, "family = 'password_reset' AND last_error = 'sending_paused'")

    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/outbox/?family=password_reset")
    expect(page.get_by_text("All times are in the portal’s time zone, Europe/Oslo.")).to_be_visible()
    listed = page.get_by_role("row", name=re.compile(row["id"]))
    expect(listed).to_contain_text("Reset your TEEI Partner Portal password")
    expect(listed).to_contain_text("paused by an operator")
    snapshot_widths(page, "console-list-subjects")

    listed.get_by_role("link").click()
    expect(page.locator("#waiting")).to_contain_text(f"Paused by an operator: {ADMIN} paused password reset emails")
    expect(page.locator("#waiting")).to_contain_text("“Checking the reset template”")
    expect(page.get_by_role("button", name="Cancel this email")).to_be_visible()
    when = page.locator(".timeline-when").all_inner_texts()
    assert when and all(re.search(r"\d\d:\d\d:\d\d CES?T$", text) for text in when), when
    snapshot_widths(page, "console-email-paused")
    assert stack.model.sent() == [], "nothing goes out while the pause holds"
