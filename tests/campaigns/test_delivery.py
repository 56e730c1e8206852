"""A campaign email as its recipient gets it: the frozen first attempt, the RFC 8058 headers,
one-click unsubscribe without a session, re-subscribing, and transactional email that still arrives."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import sqlalchemy as sa

from portal.campaigns import operations
from portal.campaigns.emails import CAMPAIGN
from portal.campaigns.sending import campaign_pass
from portal.core import clock
from portal.outbox.write.intents import TEMPLATE_INPUT


def sent_campaign(ctx, people, draft, outbox_rows, volunteers=1):
    company, emails = people(volunteers=volunteers)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx)
    return campaign, company, emails, outbox_rows(family="campaign")


def unsubscribe_path(email: dict) -> str:
    (url,) = re.findall(r"<([^>]+)>", email["headers"]["List-Unsubscribe"])
    return url.split("//", 1)[1].split("/", 1)[1].join(["/", ""])


def test_a_retry_after_a_lost_answer_sends_the_first_attempts_bytes(
    ctx, people, draft, outbox_rows, deliver, provider_model, make_due, outbox_row
):
    _, _, _, rows = sent_campaign(ctx, people, draft, outbox_rows)
    row = rows[0]
    # The campaign's rows ride in one batch; the provider took it and its answer was lost.
    provider_model.fail_next("drop_after_accept", path="/emails/batch")
    first_attempt_at = clock.utcnow()
    assert deliver(row["id"], now=first_attempt_at).startswith("retry:")
    # The render states the second it was prepared: a render a minute later differs.
    with ctx.db.read() as conn:
        template_input = conn.execute(
            sa.text(f"SELECT {TEMPLATE_INPUT} FROM email_outbox WHERE id = :id"), {"id": row["id"]}
        ).scalar()
    fresh = CAMPAIGN.render(json.loads(template_input), ctx.settings, now=first_attempt_at + timedelta(minutes=1))
    first = next(email for email in provider_model.sent() if email["to"] == [row["recipient"]])
    assert fresh.html != first["html"], "the render includes the time of rendering"

    for each in rows:
        make_due(each["id"])
    # The retry comes a minute later, when a new render would differ: it must send the frozen bytes.
    assert deliver(row["id"], now=first_attempt_at + timedelta(minutes=1)) == "ack:sent"
    assert len(provider_model.sent()) == len(rows), "the provider recognised the same key and the same bytes"
    first_request, retry = provider_model.requests()
    assert first_request["fingerprint"] == retry["fingerprint"], "the same body, List-Unsubscribe headers too"
    assert {outbox_row(each["id"])["status"] for each in rows} == {"sent"}


def test_every_campaign_email_carries_one_click_unsubscribe_headers(
    ctx, people, draft, outbox_rows, deliver, provider_model
):
    _, _, _, rows = sent_campaign(ctx, people, draft, outbox_rows, volunteers=2)
    deliver(rows[0]["id"])
    emails = provider_model.sent()
    assert len(emails) == len(rows) == 3, "one batch carried them all"
    for email in emails:
        assert email["headers"]["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert re.fullmatch(r"<http://[^>]+/unsubscribe/[^>]+>", email["headers"]["List-Unsubscribe"])
        assert unsubscribe_path(email) in email["html"] and unsubscribe_path(email) in email["text"]
        assert "Hello <strong>everyone</strong>." in email["html"] and "Hello everyone." in email["text"]
    assert len({unsubscribe_path(email) for email in emails}) == 3, "each recipient's own link"


def test_one_click_unsubscribe_needs_no_session_and_no_csrf_and_the_next_preview_says_so(
    app, ctx, people, draft, outbox_rows, deliver, provider_model, count, make_outbox_row, admin, client
):
    campaign, company, emails, rows = sent_campaign(ctx, people, draft, outbox_rows, volunteers=2)
    mine = next(row for row in rows if row["recipient"] == emails[1])
    deliver(mine["id"])
    path = unsubscribe_path(next(email for email in provider_model.sent() if email["to"] == [emails[1]]))

    mail_client = app.test_client()  # no cookie, no CSRF token: what a mail client sends
    assert "Unsubscribe from Programme news" in mail_client.get(path).get_data(as_text=True)
    assert count("campaign_topic_optouts") == 0, "opening the link changes nothing"
    answer = mail_client.post(path, data={"List-Unsubscribe": "One-Click"})
    assert answer.status_code == 200 and "no more emails about Programme news" in answer.get_data(as_text=True)
    assert count("campaign_topic_optouts", "campaign_id = :c AND topic = 'programme_news'", c=campaign) == 1
    assert count("campaign_unsubscribes") == 0, "one click stops the campaign's topic, not every campaign"
    assert mail_client.post(path, data={"List-Unsubscribe": "One-Click"}).status_code == 200, "twice is fine"

    second = draft(f"company:{company}", name="Spring news")
    preview = client.get(f"/admin/campaigns/{second}").get_data(as_text=True)
    assert "2 recipients" in preview and "1 left out" in preview and "1 unsubscribed" in preview
    operations.send(ctx, campaign_id=second, admin_id=1, send_at=None)
    campaign_pass(ctx)
    second_rows = [row for row in outbox_rows(family="campaign") if row["subject_ref"] == f"campaign:{second}"]
    assert emails[1] not in {row["recipient"] for row in second_rows} and len(second_rows) == 2

    transactional = make_outbox_row(recipient=emails[1], family="notice")
    assert deliver(transactional) == "ack:sent", "account and notice email still reach them"
    first_page = client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True)
    assert re.search(r"Unsubscribed through this campaign</td><td class=\"num\">1<", first_page)


def test_the_page_after_unsubscribing_lets_the_person_take_the_topic_back(
    ctx, people, draft, outbox_rows, deliver, provider_model, client, count
):
    _, _, _, rows = sent_campaign(ctx, people, draft, outbox_rows)
    deliver(rows[0]["id"])
    path = unsubscribe_path(provider_model.sent()[0])
    page = client.post(path).get_data(as_text=True)
    assert count("campaign_topic_optouts") == 1
    token = re.search(r'<input[^>]*name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    every = ["programme_news", "partner_news", "events"]
    again = client.post(f"{path}/preferences", data={"csrf_token": token, "topics": every})
    assert "Saved." in again.get_data(as_text=True)
    assert count("campaign_topic_optouts") == 0 and count("campaign_unsubscribes") == 0
    assert client.post(f"{path}/preferences", data={"topics": []}).status_code == 400, "saving takes the page's form"
    assert count("campaign_topic_optouts") == 0


def test_an_unknown_or_altered_token_changes_nothing(
    ctx, people, draft, outbox_rows, deliver, provider_model, client, count
):
    _, _, _, rows = sent_campaign(ctx, people, draft, outbox_rows)
    deliver(rows[0]["id"])
    path = unsubscribe_path(provider_model.sent()[0])
    assert client.post(path[:-2] + "xx").status_code == 404
    assert client.post("/unsubscribe/nothing").status_code == 404
    assert count("campaign_unsubscribes") == 0 and count("campaign_topic_optouts") == 0


def test_unsubscribing_mid_campaign_cancels_their_unsent_row(
    ctx, people, draft, outbox_rows, db, client, provider_model, deliver
):
    campaign, _, emails, rows = sent_campaign(ctx, people, draft, outbox_rows, volunteers=1)
    with db.read() as conn:
        user = conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": emails[0]}).scalar_one()
    operations.unsubscribe(db, user_id=user, campaign_id=campaign)
    statuses = {row["recipient"]: row["status"] for row in outbox_rows(family="campaign")}
    assert statuses[emails[0]] == "cancelled" and statuses[emails[1]] == "enqueued"


def test_someone_who_unsubscribes_before_their_batch_gets_no_row(ctx, people, draft, outbox_rows, db):
    company, emails = people(volunteers=2)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    with db.read() as conn:
        user = conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": emails[2]}).scalar_one()
    operations.unsubscribe(db, user_id=user, campaign_id=campaign)
    campaign_pass(ctx)
    assert {row["recipient"] for row in outbox_rows(family="campaign")} == set(emails[:2])
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT status, written FROM campaigns")).one() == ("sent", 3)
