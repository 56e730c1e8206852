"""A demo request: the lead, the submission and two emails in one transaction, once per submission."""

import hashlib
import json

import pytest
import sqlalchemy as sa

from portal.core import clock
from portal.demo import operations
from portal.email_families import FAMILIES
from portal.outbox.ground.statuses import ENQUEUED


def test_a_request_records_the_lead_the_submission_and_two_emails(ask, table_rows, outbox_rows, settings):
    result = ask()

    assert result.created and result.queued
    (lead,) = table_rows("demo_leads")
    assert (lead["email"], lead["name"], lead["company"], lead["request_count"]) == (
        "sofia@lumen.example",
        "Sofia Reyes",
        "Lumen Retail",
        1,
    )
    (submission,) = table_rows("demo_submissions")
    assert submission["lead_id"] == lead["id"] and submission["message"] == "About 40 colleagues might join."
    emails = {r["family"]: r for r in outbox_rows()}
    assert set(emails) == {"demo_confirmation", "demo_notification"}
    assert emails["demo_confirmation"]["recipient"] == "sofia@lumen.example"
    assert emails["demo_notification"]["recipient"] == settings.sales_inbox
    assert emails["demo_confirmation"]["idempotency_key"] == f"demo:{result.submission_id}:confirmation"
    assert emails["demo_notification"]["idempotency_key"] == f"demo:{result.submission_id}:notification"
    assert all(r["status"] == ENQUEUED for r in emails.values()), "published after the commit"


def test_the_sales_email_names_the_requester_and_replies_to_them(ask, outbox_rows, settings):
    ask()
    (row,) = outbox_rows(family="demo_notification")
    data = json.loads(row["template_input"])
    assert data["requester_email"] == "sofia@lumen.example"
    email = FAMILIES["demo_notification"].render(data, settings, now=clock.utcnow())
    assert email.subject == "Demo request from Lumen Retail"
    assert email.reply_to == "sofia@lumen.example"
    assert "sofia@lumen.example" in email.text and "About 40 colleagues might join." in email.html
    (row,) = outbox_rows(family="demo_confirmation")
    confirmation = FAMILIES["demo_confirmation"].render(json.loads(row["template_input"]), settings, now=clock.utcnow())
    # Anyone can type any address: the confirmation repeats nothing the sender typed.
    assert "Sofia Reyes" not in confirmation.text + confirmation.html and "Lumen" not in confirmation.text
    assert json.loads(row["template_input"]) == {"language": "en"} and "request for a demo" in confirmation.text


def test_an_address_gets_at_most_two_confirmations_a_day_and_sales_hears_of_every_request(ask, count):
    for n in range(4):
        ask(message=f"Request number {n}.")
    assert count("email_outbox", "family = 'demo_confirmation'") == 2
    assert count("email_outbox", "family = 'demo_notification'") == 4


def test_a_second_request_from_the_same_address_updates_the_lead(ask, table_rows, count):
    ask()
    ask(name="Sofía Reyes", email="Sofia@Lumen.example", company="Lumen Retail Group", message="Any time in May.")

    (lead,) = table_rows("demo_leads")
    assert (lead["name"], lead["company"], lead["request_count"]) == ("Sofía Reyes", "Lumen Retail Group", 2)
    assert count("demo_submissions", "lead_id = :id", id=lead["id"]) == 2
    assert count("email_outbox", "family = 'demo_confirmation'") == 2
    assert count("email_outbox", "family = 'demo_notification'") == 2


def test_a_replayed_post_records_one_submission_and_one_pair_of_emails(client, auth, post_demo, count):
    token = auth.csrf_token("/demo")
    first = post_demo(token=token)
    second = post_demo(token=token)

    assert first.status_code == second.status_code == 302
    assert first.headers["Location"] == "/demo/thanks"
    assert count("demo_submissions") == 1 and count("email_outbox") == 2
    assert count("demo_leads", "request_count = 1") == 1, "a replay does not count as a new request"


def test_the_same_content_after_the_replay_window_is_a_new_request(ask, db, count):
    first = ask(message="")
    with db.write() as conn:
        conn.execute(sa.text("UPDATE demo_submissions SET created_at = '2020-01-01T00:00:00.000000Z'"))
    again = ask(message="")

    assert again.created and again.submission_id != first.submission_id
    assert count("demo_submissions") == 2 and count("email_outbox") == 4
    assert count("demo_leads", "request_count = 2") == 1


def test_differently_typed_identical_content_is_a_replay(ask, count):
    ask()
    again = ask(
        name=" sofia  reyes ",
        email="SOFIA@lumen.example",
        company="lumen retail",
        message="About 40 colleagues might join.\r\n",
    )
    assert not again.created
    assert count("demo_submissions") == 1 and count("email_outbox") == 2


def test_the_replay_key_is_keyed_so_that_it_confirms_no_guess_at_the_sender(ask, db):
    """A plain hash of what the person typed would let anyone holding the database confirm a guess
    (and outlive the erasure of the fields themselves)."""
    ask()
    typed = ["sofia reyes", "sofia@lumen.example", "lumen retail", "About 40 colleagues might join."]
    with db.read() as conn:
        stored = conn.execute(sa.text("SELECT replay_key FROM demo_submissions")).scalar()
    assert stored != hashlib.sha256(json.dumps(typed).encode()).hexdigest() and len(stored) == 64


def test_honeypot_is_answered_as_accepted_and_writes_nothing(post_demo, count):
    response = post_demo(website="http://spam.example")
    assert response.status_code == 302 and response.headers["Location"] == "/demo/thanks"
    assert count("demo_leads") == 0 and count("demo_submissions") == 0 and count("email_outbox") == 0


@pytest.mark.parametrize(
    "field, value, error",
    [
        ("name", "", "Enter your name."),
        ("email", "", "Enter your work email address."),
        ("email", "sofia at lumen", "Enter an email address like name@company.com."),
        ("company", "  ", "Enter your company&#39;s name."),
        ("message", "x" * 2001, "Keep it under 2,000 characters."),
    ],
)
def test_bad_input_shows_the_field_error_and_writes_nothing(post_demo, count, field, value, error):
    response = post_demo(**{field: value})
    page = response.get_data(as_text=True)

    assert response.status_code == 400
    assert 'class="error-summary"' in page and error in page and f'id="{field}-error"' in page
    assert count("demo_leads") == 0 and count("demo_submissions") == 0 and count("email_outbox") == 0


def test_the_operation_refuses_bad_input_and_writes_nothing(ask, count):
    with pytest.raises(operations.DemoRequestError):
        ask(email="nobody")
    assert count("demo_leads") == 0 and count("email_outbox") == 0


def test_a_blank_company_is_refused_as_a_demo_request_error(ask, count):
    with pytest.raises(operations.DemoRequestError):
        ask(company="")
    assert count("demo_leads") == 0 and count("email_outbox") == 0


def test_thanks_page(client, post_demo):
    post_demo()
    page = client.get("/demo/thanks").get_data(as_text=True)
    assert "Thank you, we will be in touch" in page


def test_form_fields_follow_the_contract(client):
    page = client.get("/demo").get_data(as_text=True)
    for name in ("name", "email", "company", "message", "csrf_token"):
        assert f'name="{name}"' in page
    assert '<div class="visually-hidden" aria-hidden="true">' in page


def test_too_many_requests_from_one_client_are_refused(post_demo, count):
    for n in range(5):
        assert post_demo(email=f"person{n}@lumen.example").status_code == 302
    assert post_demo(email="person6@lumen.example").status_code == 429
    assert count("demo_submissions") == 5


def test_no_contact_details_in_logs(post_demo, caplog):
    caplog.set_level("DEBUG")
    post_demo()
    assert "sofia@lumen.example" not in caplog.text and "Sofia" not in caplog.text
