"""The console for a person deciding (issue 47.5): what each email is (its subject), what a waiting
one waits for, why one cannot be retried, buttons that say what they do, and every time in the
portal's zone, the history in order. The real app, database, Redis and provider model."""

from __future__ import annotations

import html
import re
from datetime import datetime
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core import clock
from tests.pages import csrf_from

OSLO = ZoneInfo("Europe/Oslo")


def page_of(client, path: str) -> str:
    return html.unescape(client.get(path).get_data(as_text=True))


def row_of(db, outbox_id: str) -> dict:
    with db.read() as conn:
        return dict(
            conn.execute(sa.text("SELECT * FROM email_outbox WHERE id = :id"), {"id": outbox_id}).mappings().one()
        )


def in_oslo(stored: str) -> str:
    """A stored time to the second as a person in Oslo reads it (an independent formatting)."""
    local = clock.parse(stored).astimezone(OSLO)
    return f"{local.day} {local:%b %Y, %H:%M:%S} {local.tzname()}"


def list_row(page: str, outbox_id: str) -> str:
    """The list's table row of one email, its tags stripped."""
    (row,) = re.findall(rf"<tr>\s*<td class=\"nowrap\">.*?{outbox_id}.*?</tr>", page, re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row))


def buttons(page: str) -> list[str]:
    return re.findall(r'<button type="submit" name="action" value="[a-z_]+" class="[^"]*">([^<]+)</button>', page)


def test_the_list_shows_each_emails_subject_or_what_it_is_about(
    client, admin, make_outbox_row, provider_model, deliver
):
    waiting = make_outbox_row(
        recipient="lena@example.org", data={"subject": "Your first session", "body": "Monday."}, publish=True
    )
    provider_model.fail_next("http_500")
    assert deliver(waiting).startswith("retry:")  # its content is frozen, and kept until it is sent
    sent = make_outbox_row(
        status="sent", recipient="olav@example.org", subject_ref="campaign:7", data={"subject": "Not frozen"}
    )

    page = page_of(client, "/admin/outbox/")
    assert '<th scope="col">Subject</th>' in page
    assert "Your first session" in list_row(page, waiting)
    assert "Campaign 7" in list_row(page, sent) and "Not frozen" not in page
    detail = page_of(client, f"/admin/outbox/{waiting}")
    assert "Subject: Your first session" in re.sub(r"<[^>]+>", "", detail)


def test_an_email_the_provider_asked_to_wait_says_until_when(
    client, admin, ctx, make_outbox_row, provider_model, deliver
):
    outbox_id = make_outbox_row(publish=True)
    # Every try of the claim meets a 429 with a retry-after: the email waits, nothing sent.
    provider_model.fail_next("http_429", count=3, retry_after=1)
    assert deliver(outbox_id).startswith("retry:")
    row = row_of(ctx.db, outbox_id)
    assert row["status"] == "retry" and row["last_error"].startswith("rate_limited")

    page = page_of(client, f"/admin/outbox/{outbox_id}")
    until = in_oslo(row["next_attempt_at"])
    assert f"the provider asked us to wait (429, too many requests) until {until}" in page
    assert "the provider asked us to wait" in list_row(page_of(client, "/admin/outbox/"), outbox_id)


def test_an_email_waiting_for_a_rate_slot_says_so(client, admin, ctx, make_outbox_row):
    due = clock.iso_in(30)
    outbox_id = make_outbox_row(
        status="retry", provider_message_id=None, last_error="rate_limit_wait", next_attempt_at=due
    )
    page = page_of(client, f"/admin/outbox/{outbox_id}")
    limit = ctx.settings.resend_rate_limit_per_second
    assert f"Waiting for a rate slot: the portal sends at most {limit} requests a second" in page
    assert f"the next try is at {in_oslo(due)}" in page
    assert "waiting for a rate slot" in list_row(page_of(client, "/admin/outbox/"), outbox_id)


def test_an_email_held_by_a_pause_says_who_paused_it_and_why(client, admin, make_outbox_row):
    held = make_outbox_row(family="notice", publish=True)
    other = make_outbox_row(family="password_reset", data={"reset_url": "https://x.example/r/1"}, publish=True)
    token = csrf_from(client.get("/admin/outbox").get_data(as_text=True))
    answer = client.post("/admin/outbox/pause", data={"csrf_token": token, "family": "notice", "reason": "Typo fix"})
    assert answer.status_code == 302

    page = page_of(client, f"/admin/outbox/{held}")
    assert f"Paused by an operator: {admin} paused notice emails" in page and "(“Typo fix”)" in page
    assert "goes once sending is resumed" in page
    listed = page_of(client, "/admin/outbox/")
    assert "paused by an operator" in list_row(listed, held)
    assert "paused by an operator" not in list_row(listed, other), "another family's email is not held"
    assert "Waiting in the queue" in page_of(client, f"/admin/outbox/{other}")


def test_an_email_that_cannot_be_retried_says_why(client, admin, unknown_outcome, make_outbox_row):
    maybe_sent = unknown_outcome()
    page = page_of(client, f"/admin/outbox/{maybe_sent}")
    assert "It cannot be retried: the provider may already have sent it. The portal recorded: " in page
    assert buttons(page) == ["Confirm it was sent", "Send it again as a new email"]

    refused = make_outbox_row(
        status="failed", provider_message_id=None, last_error="provider_rejected: 422 validation_error"
    )
    page = page_of(client, f"/admin/outbox/{refused}")
    assert "cannot be retried" not in page, "nothing went out: it may be retried"
    assert buttons(page) == ["Try sending it again"]

    bounced = make_outbox_row(status="bounced", provider_message_id="re_b")
    assert "the recipient's server refused it" in page_of(client, f"/admin/outbox/{bounced}")


def test_a_waiting_email_offers_cancel_this_email(client, admin, make_outbox_row):
    outbox_id = make_outbox_row()
    page = page_of(client, f"/admin/outbox/{outbox_id}")
    assert buttons(page) == ["Cancel this email"]
    token = csrf_from(page)
    answer = client.post(
        f"/admin/outbox/{outbox_id}/action", data={"csrf_token": token, "action": "cancel", "reason": "Sent twice"}
    )
    assert answer.status_code == 302


def test_every_time_of_an_email_is_in_the_portals_zone_and_its_history_in_order(
    client, admin, ctx, make_outbox_row, provider_model, deliver
):
    outbox_id = make_outbox_row(publish=True)
    provider_model.fail_next("http_500")
    assert deliver(outbox_id).startswith("retry:")
    page = page_of(client, f"/admin/outbox/{outbox_id}")
    assert "All times are in the portal’s time zone, Europe/Oslo." in page
    assert " UTC" not in page, "one zone on the page"
    shown = re.findall(r'<p class="timeline-when">([^<]+)</p>', page)
    assert len(shown) >= 4
    moments = [datetime.strptime(text.rsplit(" ", 1)[0], "%d %b %Y, %H:%M:%S") for text in shown]
    assert moments == sorted(moments), shown
    row = row_of(ctx.db, outbox_id)
    assert shown[0] == in_oslo(row["created_at"])
