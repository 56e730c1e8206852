"""A campaign's page counts its bounced emails by class (issue 49): the receipts arrive signed at the
webhook as Resend sends them, and the page reads the class each one was kept with."""

from __future__ import annotations

import json
import re

from portal.campaigns import operations
from portal.campaigns.sending import campaign_pass
from tests.builders import at, event, sign


def receive(client, settings, row, kind, number, **data):
    body = event(kind, email_id=row["provider_message_id"], to=row["recipient"], created_at=at(number), **data)
    body["data"]["tags"] = {"environment": settings.portal_env, "family": "campaign"}
    text = json.dumps(body)
    assert (
        client.post("/webhooks/resend", data=text, headers=sign(settings.resend_webhook_secret, text)).status_code
        == 200
    )


def sent_campaign(ctx, people, draft, deliver, outbox_rows, volunteers):
    company, _ = people(volunteers=volunteers)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx)
    deliver(outbox_rows(family="campaign")[0]["id"])  # one batch: the provider takes them all
    return campaign, outbox_rows(family="campaign")


def class_counts(page: str) -> dict[str, int]:
    table = page[page.index('id="bounce-classes"') :]
    table = table[: table.index("</table>")]
    return {words: int(n) for words, n in re.findall(r'<tr><td>([^<]+)</td><td class="num">(\d+)</td></tr>', table)}


def test_the_page_counts_each_bounce_class(client, admin, people, draft, ctx, deliver, outbox_rows, settings):
    campaign, rows = sent_campaign(ctx, people, draft, deliver, outbox_rows, volunteers=4)
    assert len(rows) >= 5
    receive(client, settings, rows[0], "email.bounced", 1, bounce={"type": "Permanent", "subType": "NoEmail"})
    receive(client, settings, rows[1], "email.bounced", 2, bounce={"type": "Transient", "subType": "MailboxFull"})
    receive(client, settings, rows[2], "email.bounced", 3, bounce={"type": "Transient", "subType": "MailboxFull"})
    receive(client, settings, rows[3], "email.bounced", 4, bounce={"type": "Transient", "subType": "ContentRejected"})
    receive(client, settings, rows[4], "email.delivered", 5)

    page = client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True)
    assert class_counts(page) == {
        "The mailbox does not exist": 1,
        "The mailbox is full": 2,
        "Blocked by the receiving server": 0,
        "Rejected as spam": 1,
        "A temporary failure": 0,
    }


def test_an_email_counts_once_at_its_latest_bounce(client, admin, people, draft, ctx, deliver, outbox_rows, settings):
    campaign, rows = sent_campaign(ctx, people, draft, deliver, outbox_rows, volunteers=1)
    receive(client, settings, rows[0], "email.bounced", 1, bounce={"type": "Transient", "subType": "General"})
    receive(client, settings, rows[0], "email.bounced", 2, bounce={"type": "Permanent", "subType": "General"})

    counts = class_counts(client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True))
    assert (counts["A temporary failure"], counts["Blocked by the receiving server"]) == (0, 1)


def test_a_campaign_with_no_bounce_shows_no_bounce_table(
    client, admin, people, draft, ctx, deliver, outbox_rows, settings
):
    campaign, rows = sent_campaign(ctx, people, draft, deliver, outbox_rows, volunteers=1)
    receive(client, settings, rows[0], "email.delivered", 1)
    assert 'id="bounce-classes"' not in client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True)


def test_an_email_whose_latest_word_is_a_complaint_is_not_counted_as_bounced(
    client, admin, people, draft, ctx, deliver, outbox_rows, settings
):
    campaign, rows = sent_campaign(ctx, people, draft, deliver, outbox_rows, volunteers=1)
    receive(client, settings, rows[0], "email.bounced", 1, bounce={"type": "Transient", "subType": "MailboxFull"})
    receive(client, settings, rows[1], "email.bounced", 2, bounce={"type": "Transient", "subType": "MailboxFull"})
    receive(client, settings, rows[0], "email.complained", 3)  # newer: the email now counts as complained

    assert class_counts(client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True))["The mailbox is full"] == 1
