"""Issue 26, item 5 and the campaign half of item 6: a draft is edited and duplicated; sending asks
first and states the reach; times are read and shown in the portal's zone, named, and stored as UTC;
the pages count delivered and bounced emails from the provider's receipts."""

from __future__ import annotations

import json
import re

import pytest
import sqlalchemy as sa

from portal.campaigns import operations
from portal.campaigns.emails import CAMPAIGN
from portal.campaigns.sending import campaign_pass
from portal.core import clock
from portal.outbox.write.intents import TEMPLATE_INPUT
from tests.builders import at, event, sign


def send_fields(form_token, path, **fields):
    return {**form_token(path), "send_at": "", **fields}


def campaign_row(db, campaign_id):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT * FROM campaigns WHERE id = :id"), {"id": campaign_id}).mappings().one()


def test_send_asks_first_and_states_the_reach_then_sends_the_number_confirmed(
    client, admin, people, form_token, draft, count
):
    company, _ = people(volunteers=4)
    path = f"/admin/campaigns/{draft(f'company:{company}')}"
    asked = client.get(f"{path}/send/confirm?send_at=")  # the campaign page's form: a GET, so Back never re-posts
    page = asked.get_data(as_text=True)
    assert asked.status_code == 200
    assert "Send to 5 people?" in page, "one manager and four volunteers"
    assert re.search(r'name="confirm_reach"[^>]*value="5"', page)
    assert asked.headers["Cache-Control"] == "no-store", "Back asks again, never shows a kept offer to send"
    assert count("campaign_recipients") == 0 and count("campaigns", "status = 'draft'") == 1, "asking sends nothing"

    answer = client.post(f"{path}/send", data=send_fields(form_token, path, confirm_reach="5"))
    assert answer.status_code == 303, "redirect after POST: Back and Reload never send the form again"
    assert answer.headers["Location"].endswith(path)
    assert "Sending to 5 people" in client.get(path).get_data(as_text=True)
    assert count("campaign_recipients") == 5
    again = client.get(f"{path}/send/confirm?send_at=")  # Back, to the confirmation: no longer a draft
    assert again.status_code == 303 and again.headers["Location"].endswith(path)
    assert count("campaign_recipients") == 5


def test_a_posted_ask_for_the_confirmation_is_redirected_to_it(client, admin, people, form_token, draft):
    company, _ = people(volunteers=1)
    path = f"/admin/campaigns/{draft(f'company:{company}')}"
    asked = client.post(f"{path}/send/confirm", data=send_fields(form_token, path, send_at="2030-12-24T00:30"))
    assert asked.status_code == 303
    assert asked.headers["Location"].endswith(f"{path}/send/confirm?send_at=2030-12-24T00:30")


def test_a_send_without_a_confirmed_number_only_answers_the_confirmation_page(
    client, admin, people, form_token, draft, count, outbox_rows
):
    # CONTRACT.md and README: `POST …/send` without `confirm_reach` answers the confirmation page; nothing is sent.
    company, _ = people(volunteers=1)
    path = f"/admin/campaigns/{draft(f'company:{company}')}"
    answer = client.post(f"{path}/send", data=send_fields(form_token, path))
    page = answer.get_data(as_text=True)
    assert answer.status_code == 200 and "Send to 2 people?" in page
    assert re.search(r'name="confirm_reach"[^>]*value="2"', page), "its Yes posts the number it stated"
    assert count("campaign_recipients") == 0 and count("campaigns", "status = 'draft'") == 1
    assert outbox_rows(family="campaign") == []


def test_a_confirmation_for_another_number_sends_nothing_and_asks_again(
    client, admin, people, form_token, draft, count, make_user
):
    company, _ = people(volunteers=1)
    path = f"/admin/campaigns/{draft(f'company:{company}')}"
    make_user("employee", company="Fjord Analytics AS")  # joins after the admin read "2 people"
    answer = client.post(f"{path}/send", data=send_fields(form_token, path, confirm_reach="2"))
    assert answer.status_code == 303
    page = client.get(answer.headers["Location"]).get_data(as_text=True)
    assert "it now reaches 3 people" in page and "Send to 3 people?" in page
    assert count("campaign_recipients") == 0 and count("campaigns", "status = 'draft'") == 1


def test_a_send_time_is_read_in_oslo_time_shown_with_its_zone_and_stored_as_utc(
    client, admin, people, form_token, draft, db
):
    company, _ = people(volunteers=1)
    campaign = draft(f"company:{company}")
    path = f"/admin/campaigns/{campaign}"
    # Oslo is UTC+1 in winter: 00:30 on the 24th is 23:30 UTC on the 23rd.
    asked = client.get(f"{path}/send/confirm?send_at=2030-12-24T00:30")
    page = asked.get_data(as_text=True)
    assert "Schedule for 2 people?" in page and "24 Dec 2030, 00:30 CET" in page
    assert "23:30" not in page and "UTC" not in page

    done = client.post(
        f"{path}/send",
        data=send_fields(form_token, path, send_at="2030-12-24T00:30", confirm_reach="2"),
        follow_redirects=True,
    ).get_data(as_text=True)
    assert "Scheduled for 24 Dec 2030, 00:30 CET" in done
    assert campaign_row(db, campaign)["send_at"] == "2030-12-23T23:30:00.000000Z"
    listed = client.get("/admin/campaigns").get_data(as_text=True)
    assert "24 Dec 2030, 00:30 CET" in listed


def test_a_summer_send_time_is_named_cest(client, admin, people, form_token, draft, db):
    company, _ = people(volunteers=0)
    campaign = draft(f"company:{company}")
    path = f"/admin/campaigns/{campaign}"
    fields = send_fields(form_token, path, send_at="2031-07-01T09:00", confirm_reach="1")
    done = client.post(f"{path}/send", data=fields, follow_redirects=True).get_data(as_text=True)
    assert "1 Jul 2031, 09:00 CEST" in done
    assert campaign_row(db, campaign)["send_at"] == "2031-07-01T07:00:00.000000Z"


def test_a_draft_is_edited_and_a_sent_campaign_is_not(client, admin, people, form_token, draft, db, ctx):
    company, _ = people(volunteers=1)
    campaign = draft(f"company:{company}")
    path = f"/admin/campaigns/{campaign}/edit"
    form = client.get(path).get_data(as_text=True)
    assert 'value="Winter news"' in form and "Hello **everyone**." in form, "the draft's own words to edit"
    fields = {
        **form_token(path),
        "name": "Winter news",
        "subject": "Snow at TEEI",
        "body": "Changed.",
        "audience": "all_managers",
    }
    answer = client.post(path, data=fields)
    assert answer.status_code == 303  # redirect after POST
    row = campaign_row(db, campaign)
    assert (row["subject"], row["body"], row["audience"]) == ("Snow at TEEI", "Changed.", "all_managers")

    refused = client.post(path, data={**fields, "audience": ""})
    assert refused.status_code == 400 and "Choose an audience." in refused.get_data(as_text=True)
    assert campaign_row(db, campaign)["audience"] == "all_managers", "nothing written"

    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    page = client.get(path, follow_redirects=True).get_data(as_text=True)
    assert "Only a draft can be edited" in page
    client.post(path, data={**fields, "subject": "Too late"})
    assert campaign_row(db, campaign)["subject"] == "Snow at TEEI"


def test_a_sent_campaign_is_duplicated_as_a_new_draft(client, admin, people, form_token, draft, db, ctx, count):
    company, _ = people(volunteers=1)
    campaign = draft(f"company:{company}", body="Same **words**.")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    path = f"/admin/campaigns/{campaign}"
    answer = client.post(f"{path}/duplicate", data={"csrf_token": form_token(path)["csrf_token"]})
    copy = int(answer.location.rsplit("/", 1)[1])
    assert copy != campaign
    row = campaign_row(db, copy)
    assert (row["name"], row["body"], row["audience"], row["status"]) == (
        "Copy of Winter news",
        "Same **words**.",
        f"company:{company}",
        "draft",
    )
    assert count("campaign_recipients", f"campaign_id = {copy}") == 0
    assert "Edit draft" in client.get(answer.location).get_data(as_text=True)


def test_delivered_and_bounced_come_from_the_receipts_in_plain_words(
    client, admin, people, form_token, draft, ctx, deliver, outbox_rows, settings
):
    company, _ = people(volunteers=2)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx)
    rows = outbox_rows(family="campaign")
    deliver(rows[0]["id"])  # one batch: the provider takes all three
    rows = outbox_rows(family="campaign")
    assert {row["status"] for row in rows} == {"sent"}
    outcomes = [("email.delivered", rows[0]), ("email.delivered", rows[1]), ("email.bounced", rows[2])]
    for number, (kind, row) in enumerate(outcomes):
        body = event(kind, email_id=row["provider_message_id"], to=row["recipient"], created_at=at(number + 1))
        body["data"]["tags"] = {"environment": settings.portal_env, "family": "campaign"}
        text = json.dumps(body)
        assert (
            client.post("/webhooks/resend", data=text, headers=sign(settings.resend_webhook_secret, text)).status_code
            == 200
        )

    page = client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True)
    assert "Sent to 3 of 3" in page and "written to the outbox" not in page
    table = page[page.index('id="outcomes"') :]
    cell = r'<br><span class="hint">[^<]*</span></td><td class="num">{}</td>'
    assert re.search("Delivered" + cell.format(2), table) and re.search("Bounced" + cell.format(1), table)
    listed = client.get("/admin/campaigns").get_data(as_text=True)
    assert "Sent to 3 of 3" in listed and "2 delivered · 1 bounced" in listed


def test_the_footer_a_volunteer_reads_states_no_machine_time(ctx, people, draft, outbox_rows, db):
    company, _ = people(volunteers=1)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx)
    row = outbox_rows(family="campaign")[0]
    with db.read() as conn:
        template_input = conn.execute(
            sa.text(f"SELECT {TEMPLATE_INPUT} FROM email_outbox WHERE id = :id"), {"id": row["id"]}
        ).scalar()
    email = CAMPAIGN.render(json.loads(template_input), ctx.settings, now=clock.utcnow())
    visible_html = re.sub(r"<!--.*?-->", "", email.html, flags=re.S)
    for shown in (email.text, visible_html):
        assert "or unsubscribe" in shown
        assert "Prepared" not in shown and "UTC" not in shown


@pytest.mark.parametrize("typed", ["24.12.2030 00:30", "2030-12-24 00:30", "2030-12-24T00:30"])
def test_a_send_time_is_typed_day_first_or_year_first(client, admin, people, form_token, draft, db, typed):
    company, _ = people(volunteers=0)
    campaign = draft(f"company:{company}")
    path = f"/admin/campaigns/{campaign}"
    client.post(f"{path}/send", data=send_fields(form_token, path, send_at=typed, confirm_reach="1"))
    assert campaign_row(db, campaign)["send_at"] == "2030-12-23T23:30:00.000000Z"


@pytest.mark.parametrize("typed", ["31.02.2030 10:00", "12/24/2030 10:00", "tomorrow"])
def test_a_send_time_that_is_no_date_is_refused_with_the_formats(client, admin, people, form_token, draft, db, typed):
    company, _ = people(volunteers=0)
    campaign = draft(f"company:{company}")
    path = f"/admin/campaigns/{campaign}"
    page = client.post(f"{path}/send", data=send_fields(form_token, path, send_at=typed), follow_redirects=True)
    assert "e.g. 24.12.2026 09:00 or 2026-12-24 09:00" in page.get_data(as_text=True)
    assert campaign_row(db, campaign)["status"] == "draft"


def test_cancelling_asks_first_and_an_answer_but_yes_changes_nothing(
    client, admin, people, form_token, draft, count, db
):
    company, _ = people(volunteers=1)
    campaign = draft(f"company:{company}")
    path = f"/admin/campaigns/{campaign}"
    client.post(f"{path}/send", data=send_fields(form_token, path, send_at="2030-12-24T00:30", confirm_reach="2"))
    assert campaign_row(db, campaign)["status"] == "scheduled"
    shown = client.get(path).get_data(as_text=True)
    assert f'href="{path}/cancel"' in shown, "the page's Cancel campaign opens the question"
    asked = client.get(f"{path}/cancel").get_data(as_text=True)
    assert "Cancel Winter news?" in asked and "24 Dec 2030, 00:30 CET" in asked and "Cancelling is final." in asked
    token = form_token(path)
    answer = client.post(f"{path}/cancel", data={**token, "confirmed": "ask"})
    assert answer.status_code == 200 and "Cancel Winter news?" in answer.get_data(as_text=True)
    assert campaign_row(db, campaign)["status"] == "scheduled", "nothing cancelled without the Yes"
    done = client.post(f"{path}/cancel", data={**token, "confirmed": "yes"}, follow_redirects=True)
    assert "Cancelled." in done.get_data(as_text=True)
    assert campaign_row(db, campaign)["status"] == "cancelled"
    again = client.get(f"{path}/cancel", follow_redirects=True).get_data(as_text=True)
    assert "already cancelled; there is nothing to cancel" in again


def test_discarding_a_draft_asks_first_and_a_scripts_post_keeps_its_contract(
    client, admin, people, form_token, draft, db
):
    company, _ = people(volunteers=1)
    campaign = draft(f"company:{company}")
    path = f"/admin/campaigns/{campaign}"
    asked = client.get(f"{path}/cancel").get_data(as_text=True)
    assert "Discard the draft Winter news?" in asked and "Discarding is final." in asked
    assert campaign_row(db, campaign)["status"] == "draft"
    client.post(f"{path}/cancel", data={**form_token(path), "confirmed": "yes"})
    assert campaign_row(db, campaign)["status"] == "cancelled"
    # CONTRACT.md: `POST …/cancel` with no fields but the form's token cancels.
    other = draft(f"company:{company}")
    client.post(f"/admin/campaigns/{other}/cancel", data=form_token(f"/admin/campaigns/{other}"))
    assert campaign_row(db, other)["status"] == "cancelled"
