"""Composing, previewing, test-sending, sending and cancelling a campaign as an admin, and the bad input list."""

from __future__ import annotations

from datetime import timedelta

import pytest

from portal.campaigns import operations
from portal.campaigns.sending import campaign_pass
from portal.core import clock


def compose(client, form_token, **fields):
    data = {**form_token("/admin/campaigns/new"), "name": "Winter news", "subject": "News from TEEI"}
    data.update({"body": "Hello **all**.", **fields})
    return client.post("/admin/campaigns/new", data=data)


def test_an_admin_composes_and_sees_the_preview_and_who_it_reaches(client, admin, people, form_token):
    company, _ = people(volunteers=2)
    answer = compose(
        client, form_token, audience=f"company:{company}", body="# Autumn\n\nRead [our news](https://teei.org)."
    )
    page = client.get(answer.location).get_data(as_text=True)
    assert "<h1>Autumn</h1>" in page and 'href="https://teei.org"' in page
    assert "Read our news (https://teei.org)" in page, "the plain-text part comes from the same Markdown"
    assert "3 recipients" in page and "Nobody is left out" in page


def test_the_body_is_sanitised(client, admin, people, form_token):
    company, _ = people(volunteers=0)
    body = 'Hi <script>alert(1)</script> [x](javascript:alert(2)) <img src=x onerror="alert(3)">'
    page = client.get(compose(client, form_token, audience=f"company:{company}", body=body).location).get_data(
        as_text=True
    )
    preview = page[page.index('id="preview"') : page.index("</section>", page.index('id="preview"'))]
    assert "<script" not in preview and "<img" not in preview, "typed HTML stays text"
    assert 'href="javascript' not in preview, "no script link"
    assert "&lt;script&gt;" in preview, "the admin sees what they typed"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"subject": "  "}, "Write a subject."),
        ({"audience": ""}, "Choose an audience."),
        ({"audience": "everyone"}, "Choose an audience from the list."),
        ({"audience": "company:999"}, "Choose an audience from the list."),
        ({"body": "x" * (100 * 1024 + 1)}, "The body is over 100 KB"),
        # A zero-width space or a right-to-left override shows recipients other words than the admin wrote.
        ({"subject": "Pay\u200bment overdue"}, "Remove the invisible characters"),
        ({"subject": "Your report \u202efdp.exe"}, "Remove the invisible characters"),
        ({"body": "Click \u2066here\u2069."}, "Remove the invisible characters"),
        ({"subject_nb": "Nytt\u200b fra TEEI", "body_nb": "Hei."}, "Remove the invisible characters"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message_and_nothing_written(
    client, admin, people, form_token, count, fields, message
):
    company, _ = people(volunteers=1)
    answer = compose(client, form_token, **{"audience": f"company:{company}", **fields})
    assert answer.status_code == 400
    assert message in answer.get_data(as_text=True)
    assert count("campaigns") == 0


def test_a_send_time_in_the_past_and_a_second_send_are_refused(client, admin, people, form_token, draft, count, db):
    company, _ = people(volunteers=1)
    campaign = draft(f"company:{company}")
    path = f"/admin/campaigns/{campaign}"
    past = (clock.utcnow() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M+00:00")
    page = client.post(f"{path}/send", data={**form_token(path), "send_at": past}, follow_redirects=True)
    assert "The send time has passed" in page.get_data(as_text=True)
    assert count("campaigns", "status = 'draft'") == 1 and count("campaign_recipients") == 0

    client.post(f"{path}/send", data={**form_token(path), "send_at": "", "confirm_reach": "2"})
    assert count("campaign_recipients") == 2, "sent now: the list of two is fixed"
    again = {**form_token(path), "send_at": "", "confirm_reach": "2"}
    page = client.post(f"{path}/send", data=again, follow_redirects=True)
    assert "already sent; it is sent only once" in page.get_data(as_text=True)
    assert count("campaign_recipients") == 2 and count("email_outbox") == 0


def test_a_test_send_goes_to_the_signed_in_admin_once_per_click(client, admin, people, form_token, draft, outbox_rows):
    company, emails = people(volunteers=1)
    campaign = draft(f"company:{company}")
    path = f"/admin/campaigns/{campaign}"
    fields = form_token(path)
    first = client.post(f"{path}/test", data=fields, follow_redirects=True).get_data(as_text=True)
    again = client.post(f"{path}/test", data=fields, follow_redirects=True).get_data(as_text=True)
    assert "A test copy is on its way to ada@teei.example" in first
    assert "already sent" in again
    (row,) = outbox_rows(family="campaign_test")
    assert row["recipient"] == "ada@teei.example"
    assert outbox_rows(family="campaign") == [], "nobody in the audience got anything"


def test_a_test_send_with_only_the_token_is_sent(client, admin, people, form_token, draft, outbox_rows):
    """CONTRACT.md lists no field but the token for `POST …/test`: that alone sends a test copy."""
    company, _ = people(volunteers=1)
    path = f"/admin/campaigns/{draft(f'company:{company}')}"
    only_token = {"csrf_token": form_token(path)["csrf_token"]}
    page = client.post(f"{path}/test", data=only_token, follow_redirects=True).get_data(as_text=True)
    assert "A test copy is on its way to ada@teei.example" in page
    assert len(outbox_rows(family="campaign_test")) == 1


def test_a_scheduled_campaign_starts_when_its_time_comes(ctx, people, draft, count):
    company, _ = people(volunteers=2)
    campaign = draft(f"company:{company}")
    soon = clock.utcnow() + timedelta(minutes=10)
    result = operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=soon)
    assert not result.started
    assert campaign_pass(ctx) == 0 and count("email_outbox") == 0, "not yet due"
    assert campaign_pass(ctx, now=soon + timedelta(seconds=1)) == 3
    assert count("campaigns", "status = 'sent' AND written = 3") == 1


def test_cancel_before_it_starts_sends_nothing(ctx, people, draft, count):
    company, _ = people(volunteers=2)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=clock.utcnow() + timedelta(minutes=5))
    assert operations.cancel(ctx.db, campaign_id=campaign) == operations.CancelResult(stopped=0, may_still_go_out=0)
    assert campaign_pass(ctx, now=clock.utcnow() + timedelta(hours=1)) == 0
    assert count("email_outbox") == 0 and count("campaigns", "status = 'cancelled'") == 1
    with pytest.raises(operations.CampaignError, match="already cancelled"):
        operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)


@pytest.mark.parametrize("field", ["name", "subject", "body", "subject_nb", "body_nb"])
def test_the_operations_refuse_hidden_characters_whoever_calls_them(db, make_user, user_id, count, field):
    admin_id = user_id(make_user("admin"))
    fields = {"name": "Winter", "subject": "News", "body": "Hello.", "subject_nb": "Nytt", "body_nb": "Hei."}
    fields[field] = fields[field][:2] + "\u200b" + fields[field][2:]
    with pytest.raises(operations.CampaignError, match="invisible characters"):
        operations.create_campaign(db, admin_id=admin_id, audience="all_managers", **fields)
    assert count("campaigns") == 0
