"""Applying to become a partner: one row and one confirmation email, written together, once."""

import json
from datetime import timedelta

import pytest

from portal.applications import operations
from portal.core import clock
from portal.email_families import FAMILIES
from portal.outbox.ground.statuses import ENQUEUED
from tests.pages import csrf_from


def test_valid_application_writes_one_row_and_one_intent(submit, count, outbox_rows, settings):
    result = submit()

    assert result.created and result.queued
    assert count("company_applications") == 1
    assert count("company_applications", "state = 'new' AND contact_email = 'ingrid@fjord.example'") == 1
    (row,) = outbox_rows(family="application_received")
    assert row["family"] == "application_received"
    assert row["recipient"] == "ingrid@fjord.example"
    assert row["idempotency_key"] == f"application:{result.application_id}:received"
    assert row["status"] == ENQUEUED, "published after the commit"
    email = FAMILIES["application_received"].render(json.loads(row["template_input"]), settings, now=clock.utcnow())
    assert "Thank you for applying" in email.html and "will write to you with the decision" in email.text


def test_the_applications_inbox_hears_of_each_application_once(submit, outbox_rows, settings):
    settings_inbox = settings.applications_inbox
    first = submit()
    submit()  # a replay: no second notice

    (row,) = outbox_rows(family="application_notification")
    assert row["recipient"] == settings_inbox == "partners@teei.example"
    assert row["idempotency_key"] == f"application:{first.application_id}:notification"
    assert row["status"] == ENQUEUED, "through the outbox, published after the commit"
    email = FAMILIES["application_notification"].render(json.loads(row["template_input"]), settings, now=clock.utcnow())
    assert email.subject == "New partner application from Fjord Analytics AS"
    assert email.reply_to == "ingrid@fjord.example", "the team answers the applicant from its inbox"
    review = f"{settings.public_base_url}/admin/applications/{first.application_id}"
    assert review in email.text and f'href="{review}"' in email.html
    assert "120" in email.text and "We would like our analysts to mentor." in email.text


def test_the_applications_inbox_is_a_setting(tmp_path):
    from portal.core.settings import ConfigError, Settings

    chosen = Settings.from_env({"APPLICATIONS_INBOX": "growth@teei.example"}, instance_path=tmp_path)
    assert chosen.applications_inbox == "growth@teei.example"
    with pytest.raises(ConfigError, match="APPLICATIONS_INBOX"):
        Settings.from_env({"APPLICATIONS_INBOX": "not an address"}, instance_path=tmp_path)


def test_the_form_writes_the_application_and_thanks_the_applicant(client, post_application, count, outbox_rows):
    response = post_application()

    assert response.status_code == 302 and response.headers["Location"] == "/apply/thanks"
    assert "Thank you for applying" in client.get("/apply/thanks").get_data(as_text=True)
    assert count("company_applications") == 1 and len(outbox_rows(family="application_received")) == 1


def test_replayed_post_records_one_application_and_one_email(client, auth, post_application, count, outbox_rows):
    token = auth.csrf_token("/apply")
    first = post_application(token=token)
    second = post_application(token=token)  # a double click sends the same form twice

    assert first.status_code == second.status_code == 302
    assert count("company_applications") == 1
    assert len(outbox_rows(family="application_received")) == 1


def test_same_contact_and_company_differently_typed_is_the_same_open_application(submit, count, outbox_rows):
    first = submit()
    again = submit(company_name="  fjord   analytics as ", contact_email="Ingrid@Fjord.example", employee_count=99)

    assert not again.created and again.application_id == first.application_id
    assert count("company_applications") == 1 and len(outbox_rows()) == 2  # the confirmation and TEEI's notice


def test_full_width_characters_do_not_make_another_company(submit, count):
    first = submit()
    # Full-width letters: the same name as people see it.
    again = submit(company_name="Fjord Analytics \uff21\uff33")
    assert again.application_id == first.application_id and count("company_applications") == 1


@pytest.mark.parametrize("invisible", ["\u200b", "\u2060", "\ufeff", "\u00ad", "\u200d", "\U000e0041"])
@pytest.mark.parametrize("field", ["company_name", "contact_name", "message"])
def test_invisible_characters_are_refused_whoever_submits(submit, count, field, invisible):
    """Zero-width spaces, word joiners, byte-order marks, soft hyphens, a joiner between Latin letters,
    tag characters: the team and the applicant's confirmation would read other words than were typed."""
    with pytest.raises(operations.ApplicationError, match="invisible characters"):
        submit(**{field: f"Fjord{invisible}Analytics"})
    assert count("company_applications") == 0


@pytest.mark.parametrize("field", ["company_name", "contact_name", "message"])
def test_direction_overrides_in_names_are_refused(submit, count, field):
    with pytest.raises(operations.ApplicationError, match="direction"):
        submit(**{field: "Fjord \u202eLtd"})
    assert count("company_applications") == 0


def test_after_a_decline_the_company_may_apply_again(submit, decide, count, outbox_rows):
    first = submit()
    decide(first.application_id, "decline")
    second = submit()

    assert second.created and second.application_id != first.application_id
    assert count("company_applications") == 2
    assert len(outbox_rows(family="application_received")) == 2


@pytest.mark.parametrize(
    "field, value, error",
    [
        ("company_name", "", "Enter your company&#39;s name."),
        ("contact_email", "not-an-address", "Enter an email address like name@company.com."),
        ("employee_count", "0", "Enter a whole number of at least 1."),
        ("employee_count", "twelve", "Enter a whole number, like 250."),
        ("employee_count", "2.5", "Enter a whole number, like 250."),
        ("message", "x" * 2001, "Keep it under 2,000 characters."),
    ],
)
def test_bad_input_shows_the_field_error_and_writes_nothing(post_application, count, field, value, error):
    response = post_application(**{field: value})
    page = response.get_data(as_text=True)

    assert response.status_code == 400
    assert 'class="error-summary"' in page and error in page
    assert f'id="{field}-error"' in page, "the message sits next to its field"
    assert count("company_applications") == 0 and count("email_outbox") == 0


def test_employee_count_accepts_thousands_separators(post_application, count):
    assert post_application(employee_count="1,200").status_code == 302
    assert count("company_applications", "employee_count = 1200") == 1


def test_the_operation_refuses_bad_input_and_writes_nothing(submit, count):
    with pytest.raises(operations.ApplicationError):
        submit(employee_count=0)
    assert count("company_applications") == 0 and count("email_outbox") == 0


def test_a_blank_name_is_refused_as_an_application_error(submit, count):
    with pytest.raises(operations.ApplicationError):
        submit(contact_name="   ")
    assert count("company_applications") == 0 and count("email_outbox") == 0


def test_honeypot_is_answered_as_accepted_and_writes_nothing(post_application, count):
    response = post_application(website="http://spam.example")

    assert response.status_code == 302 and response.headers["Location"] == "/apply/thanks"
    assert count("company_applications") == 0 and count("email_outbox") == 0


def test_honeypot_is_hidden_from_people(client):
    page = client.get("/apply").get_data(as_text=True)
    assert '<div class="visually-hidden" aria-hidden="true">' in page
    assert 'name="website" tabindex="-1"' in page or ('name="website"' in page and 'tabindex="-1"' in page)


def test_too_many_applications_from_one_client_are_refused(post_application, count):
    for n in range(5):
        assert post_application(company_name=f"Company {n}").status_code == 302
    refused = post_application(company_name="Company 6")

    assert refused.status_code == 429
    assert "Too many attempts" in refused.get_data(as_text=True)
    assert count("company_applications") == 5


def test_mistakes_do_not_use_up_the_accepted_limit(post_application, count):
    for _ in range(6):
        assert post_application(employee_count="0").status_code == 400
    assert post_application().status_code == 302
    assert count("company_applications") == 1


def test_form_page_and_nav_link(client):
    page = client.get("/apply").get_data(as_text=True)
    for name in ("company_name", "contact_name", "contact_email", "employee_count", "message", "csrf_token"):
        assert f'name="{name}"' in page
    assert 'href="/apply">Become a partner</a>' in page and 'href="/demo">Request a demo</a>' in page


def test_no_contact_details_in_logs(post_application, caplog):
    caplog.set_level("DEBUG")
    post_application()
    assert "ingrid@fjord.example" not in caplog.text and "Ingrid" not in caplog.text


def test_the_confirmation_repeats_nothing_the_applicant_typed(submit, outbox_rows, settings):
    """Whoever fills in the public form chooses the address: the confirmation says only what the
    applicant needs to know, so the form cannot carry someone's words to someone else's inbox."""
    submit(company_name="Win a prize at prize.example", contact_name="Claim it today", employee_count=4321)
    (row,) = outbox_rows(family="application_received")
    stored = json.loads(row["template_input"])
    assert stored == {"language": "en"}, "the language it is written in, nothing else"
    email = FAMILIES["application_received"].render(stored, settings, now=clock.utcnow())
    for typed in ("prize", "Claim it", "4321", "4,321"):
        assert typed not in row["template_input"] and typed not in email.html and typed not in email.text
        assert typed not in email.subject
    assert "If you did not apply, you can ignore this email." in email.text
    (notice,) = outbox_rows(family="application_notification")
    assert "Win a prize at prize.example" in notice["template_input"], "TEEI's own inbox reads what was typed"


def test_an_address_gets_at_most_two_confirmations_a_day_however_many_clients_name_it(app, count, outbox_rows):
    """Each client may send the form five times an hour; a hundred clients could fill one inbox."""
    for n in range(5):
        browser = app.test_client()
        browser.environ_base["REMOTE_ADDR"] = f"203.0.113.{n + 1}"
        token = csrf_from(browser.get("/apply").get_data(as_text=True))
        form = {
            "company_name": f"Company {n}",
            "contact_name": "Ingrid Dahl",
            "contact_email": "Ingrid@Fjord.example" if n % 2 else "ingrid@fjord.example",
            "employee_count": "12",
            "csrf_token": token,
        }
        assert browser.post("/apply", data=form).status_code == 302
    assert count("company_applications") == 5, "every application is recorded"
    assert len(outbox_rows(family="application_notification")) == 5, "and TEEI hears of each"
    assert len(outbox_rows(family="application_received", recipient="ingrid@fjord.example")) == 2


def test_the_cap_per_address_starts_again_a_day_later(submit, outbox_rows):
    start = clock.utcnow()
    for n in range(3):
        submit(company_name=f"Company {n}", now=start + timedelta(hours=n))
    assert len(outbox_rows(family="application_received")) == 2
    submit(company_name="Company 3", now=start + timedelta(hours=24))
    assert len(outbox_rows(family="application_received")) == 2, "the address was named twice in the day before"
    submit(company_name="Company 4", now=start + timedelta(hours=26, seconds=1))
    assert len(outbox_rows(family="application_received")) == 3, "named once in the day before"
    submit(company_name="Company 5", contact_email="someone.else@fjord.example", now=start)
    assert len(outbox_rows(family="application_received")) == 4, "per address: another one has its own"
