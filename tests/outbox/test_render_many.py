"""A batch renders its members together (Family.render_many): the bytes each member gets are the
bytes rendering it alone gives, whatever the template does with a value declared personal."""

from __future__ import annotations

import dataclasses

import pytest

from portal.applications.emails import NOTIFICATION
from portal.campaigns.emails import CAMPAIGN
from portal.core import clock


def application(n: int, **changes) -> dict:
    """The notification of one application, with the contact details of its `n`th form."""
    return {
        "application_id": 9,
        "company_name": "Fjord & Co <AS>",
        "contact_name": f'Åse "{n}" <o\'Neil>',
        "contact_email": f"contact{n}@example.org",
        "employee_count": 1200,
        "message": f"We'd like to <b>join</b> & help {n}.",
        "language": "en",
        **changes,
    }


def one_by_one(family, inputs, settings, now):
    return [family.render(data, settings, now=now) for data in inputs]


def test_a_campaign_batch_gets_the_bytes_each_member_would_get_alone(settings):
    now = clock.utcnow()
    versions = [
        {
            "campaign_id": 4,
            "subject": "News & <views>",
            "body": "**Hello** & <b>welcome</b>\n\n[a](https://e.org/?a=1&b=2)",
        },
        {"campaign_id": 4, "subject": "Nytt", "body": "Hei & velkommen", "language": "nb"},
    ]
    inputs = [{**versions[n % 3 == 0], "user_id": n, "recipient_name": f'<Name {n}> & "quotes"'} for n in range(1, 40)]
    rendered = CAMPAIGN.render_many(inputs, settings, now=now)
    assert rendered == one_by_one(CAMPAIGN, inputs, settings, now)
    # Each member's own link, once in each part and in the header.
    links = {dict(email.headers)["List-Unsubscribe"].strip("<>") for email in rendered}
    assert len(links) == len(inputs)
    assert all(dict(e.headers)["List-Unsubscribe"].strip("<>") in e.text for e in rendered)


def test_a_personal_value_the_template_tests_makes_every_member_render_alone(settings):
    # application_notification shows its message only `{% if message %}`: a shared render made for
    # the first member (no message) cannot hold the others' messages, and the check says so.
    family = dataclasses.replace(NOTIFICATION, personal=("message",))
    inputs = [application(1, message=""), application(1), application(1, message="")]
    now = clock.utcnow()
    rendered = family.render_many(inputs, settings, now=now)
    assert rendered == one_by_one(family, inputs, settings, now)
    assert "join" in rendered[1].text and "join" not in rendered[0].text
    assert "border-left" not in rendered[2].html  # no empty message box


def test_a_personal_value_the_template_computes_with_makes_every_member_render_alone(settings):
    family = dataclasses.replace(NOTIFICATION, personal=("employee_count",))  # printed through |number
    inputs = [application(1), application(1, employee_count=3), application(1, employee_count=987654)]
    now = clock.utcnow()
    assert family.render_many(inputs, settings, now=now) == one_by_one(family, inputs, settings, now)


def test_a_personal_value_printed_inside_a_translation_is_shared_and_escaped_as_alone(settings):
    family = dataclasses.replace(NOTIFICATION, personal=("contact_name", "contact_email"))
    inputs = [application(n, message="The same words") for n in range(1, 6)]
    now = clock.utcnow()
    rendered = family.render_many(inputs, settings, now=now)
    assert rendered == one_by_one(family, inputs, settings, now)
    assert "Åse &#34;2&#34; &lt;o&#39;Neil&gt;" in rendered[1].html and 'Åse "2" <o\'Neil>' in rendered[1].text


def test_a_member_that_does_not_render_gets_its_error_and_the_others_their_emails(settings):
    inputs = [
        {"campaign_id": 4, "subject": "News", "body": "Hi", "user_id": 1, "recipient_name": ""},
        {"campaign_id": 4, "subject": "News", "user_id": 2, "recipient_name": ""},  # no body
        {"campaign_id": 4, "subject": "News", "body": "Hi", "user_id": 3, "recipient_name": ""},
    ]
    now = clock.utcnow()
    first, broken, third = CAMPAIGN.render_many(inputs, settings, now=now)
    assert isinstance(broken, KeyError)
    assert [first, third] == one_by_one(CAMPAIGN, [inputs[0], inputs[2]], settings, now)
    with pytest.raises(KeyError):
        CAMPAIGN.render(inputs[1], settings, now=now)
