"""A campaign in each reader's language: the admin writes an English version and, if they like, a
Norwegian one; each recipient gets the version of the language they read (their own choice, else
their company's), the English one when there is no version in it; the page says who gets which."""

from __future__ import annotations

import json
import re

import sqlalchemy as sa

from portal.campaigns import operations
from portal.campaigns.sending import campaign_pass
from portal.core.i18n import translate

NORWEGIAN = {"subject_nb": "Nytt fra TEEI", "body_nb": "Hei **alle sammen**.\n\nVi ses snart."}


def set_language(db, email, language):
    with db.write() as conn:
        conn.execute(sa.text("UPDATE users SET language = :l WHERE email = :e"), {"l": language, "e": email})


def bilingual(db, user_id, audience, **content):
    """A draft with both versions, written by a fresh admin."""
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO users (email, password_hash, role) VALUES ('writer@teei.example', 'x', 'admin') "
                "ON CONFLICT (email) DO NOTHING"
            )
        )
    fields = {
        "name": "Winter news",
        "subject": "News from TEEI",
        "body": "Hello **everyone**.\n\nSee you soon.",
        **NORWEGIAN,
        **content,
    }
    return operations.create_campaign(db, admin_id=user_id("writer@teei.example"), audience=audience, **fields)


def sent_to(ctx, campaign, outbox_rows, deliver, provider_model):
    """Send the campaign now, write its rows, deliver them; {recipient: the email the provider got}."""
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx)
    rows = outbox_rows(family="campaign")
    for row in rows:
        deliver(row["id"])
    return {email["to"][0]: email for email in provider_model.sent()}, rows


def test_two_recipients_of_two_languages_each_get_their_version(
    ctx, db, people, user_id, outbox_rows, deliver, provider_model
):
    company, (manager, volunteer) = people(volunteers=1)
    set_language(db, volunteer, "nb")  # the manager chose nothing; their company reads English
    campaign = bilingual(db, user_id, f"company:{company}")

    emails, rows = sent_to(ctx, campaign, outbox_rows, deliver, provider_model)

    english, norwegian = emails[manager], emails[volunteer]
    assert english["subject"] == "News from TEEI"
    assert "Hello <strong>everyone</strong>." in english["html"] and "Hello everyone." in english["text"]
    assert "alle sammen" not in english["html"]
    assert norwegian["subject"] == "Nytt fra TEEI"
    assert "Hei <strong>alle sammen</strong>." in norwegian["html"] and "Hei alle sammen." in norwegian["text"]
    assert "everyone" not in norwegian["html"]
    # The email's own words (the footer) are in the version's language too.
    assert "Choose the topics you get, or unsubscribe" in english["html"]
    assert translate("nb", "Choose the topics you get, or unsubscribe") in norwegian["html"]
    assert translate("nb", "Choose the topics you get, or unsubscribe") in norwegian["text"]

    # The version is stored with each row, and each version's words are stored once, apart.
    languages = {row["recipient"]: json.loads(row["template_input"])["language"] for row in rows}
    assert languages == {manager: "en", volunteer: "nb"}
    with db.read() as conn:
        shared = [json.loads(data) for data in conn.execute(sa.text("SELECT data FROM email_shared_inputs")).scalars()]
    assert sorted((each["language"], each["subject"]) for each in shared) == [
        ("en", "News from TEEI"),
        ("nb", "Nytt fra TEEI"),
    ]
    assert len({row["shared_input_id"] for row in rows}) == 2


def test_without_a_choice_the_companys_language_decides(ctx, db, people, user_id, outbox_rows, deliver, provider_model):
    company, (manager, volunteer) = people(volunteers=1)
    with db.write() as conn:
        conn.execute(sa.text("UPDATE companies SET language = 'nb' WHERE id = :c"), {"c": company})
    set_language(db, manager, "en")  # their own choice beats their company's
    campaign = bilingual(db, user_id, f"company:{company}")

    emails, _ = sent_to(ctx, campaign, outbox_rows, deliver, provider_model)
    assert emails[manager]["subject"] == "News from TEEI"
    assert emails[volunteer]["subject"] == "Nytt fra TEEI"


def test_without_a_norwegian_version_a_norwegian_reader_gets_the_english_one(
    ctx, db, people, draft, outbox_rows, deliver, provider_model, client, admin
):
    company, (manager, volunteer) = people(volunteers=1)
    set_language(db, volunteer, "nb")
    campaign = draft(f"company:{company}")
    page = client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True)
    assert "There is no Norwegian version: everyone gets the English one." in page
    assert "1 person in the audience reads Norwegian." in page
    assert 'id="version-nb"' not in page

    emails, rows = sent_to(ctx, campaign, outbox_rows, deliver, provider_model)
    assert {email["subject"] for email in emails.values()} == {"News from TEEI"}
    assert {json.loads(row["template_input"])["language"] for row in rows} == {"en"}
    assert "Choose the topics you get, or unsubscribe" in emails[volunteer]["html"], "the whole email is English"


def test_the_page_shows_the_versions_and_how_many_get_each(ctx, db, people, user_id, client, admin):
    company, (manager, first, second) = people(volunteers=2)
    set_language(db, first, "nb")
    set_language(db, second, "nb")
    campaign = bilingual(db, user_id, f"company:{company}")
    path = f"/admin/campaigns/{campaign}"

    page = client.get(path).get_data(as_text=True)
    assert re.search(r'id="version-en">1 recipient as of now<', page)
    assert re.search(r'id="version-nb">2 recipients as of now<', page)
    preview = page[page.index('id="preview-nb"') :]
    assert (
        'lang="nb"' in page[page.index('<h2 id="preview-title"') :] and "Hei <strong>alle sammen</strong>." in preview
    )
    assert "Nytt fra TEEI" in page and "Send me the Norwegian test" in page

    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    page = client.get(path).get_data(as_text=True)
    assert re.search(r'id="version-en">1 recipient<', page) and re.search(r'id="version-nb">2 recipients<', page)
    with db.read() as conn:
        fixed = conn.execute(sa.text("SELECT language, COUNT(*) FROM campaign_recipients GROUP BY 1 ORDER BY 1")).all()
    assert [tuple(row) for row in fixed] == [("en", 1), ("nb", 2)], "the version is fixed with the list"


def test_the_form_takes_a_norwegian_version_both_fields_or_neither(client, admin, people, form_token, db, count):
    company, _ = people(volunteers=1)
    fields = {
        **form_token("/admin/campaigns/new"),
        "name": "Winter news",
        "subject": "News from TEEI",
        "body": "Hello.",
        "audience": f"company:{company}",
    }
    half = client.post("/admin/campaigns/new", data={**fields, "subject_nb": "Nytt fra TEEI"})
    assert half.status_code == 400
    assert "Write the Norwegian body too, or leave the Norwegian version empty." in half.get_data(as_text=True)
    other_half = client.post("/admin/campaigns/new", data={**fields, "body_nb": "Hei."})
    assert "Write the Norwegian subject too" in other_half.get_data(as_text=True)
    assert count("campaigns") == 0

    answer = client.post("/admin/campaigns/new", data={**fields, **NORWEGIAN})
    assert answer.status_code == 303  # redirect after POST
    with db.read() as conn:
        row = conn.execute(sa.text("SELECT subject_nb, body_nb FROM campaigns")).one()
    assert tuple(row) == (NORWEGIAN["subject_nb"], NORWEGIAN["body_nb"])

    edit = answer.location + "/edit"
    form = client.get(edit).get_data(as_text=True)
    assert 'value="Nytt fra TEEI"' in form and "Hei **alle sammen**." in form, "the Norwegian words to edit"
    cleared = {**form_token(edit), **{key: value for key, value in fields.items() if key != "csrf_token"}}
    assert (
        client.post(edit, data={**cleared, "subject_nb": "", "body_nb": "  "}).status_code == 303
    )  # redirect after POST
    with db.read() as conn:
        assert tuple(conn.execute(sa.text("SELECT subject_nb, body_nb FROM campaigns")).one()) == (None, None)


def test_a_test_of_each_version_goes_to_the_admin(client, admin, people, form_token, db, user_id, outbox_rows):
    company, _ = people(volunteers=1)
    campaign = bilingual(db, user_id, f"company:{company}")
    path = f"/admin/campaigns/{campaign}"
    fields = form_token(path)
    page = client.post(f"{path}/test", data={**fields, "language": "nb"}, follow_redirects=True)
    assert "A test copy of the Norwegian version is on its way to ada@teei.example." in page.get_data(as_text=True)
    client.post(f"{path}/test", data={**fields, "language": "nb"})  # a double click: one email
    client.post(f"{path}/test", data={**fields, "language": "en"})
    rows = outbox_rows(family="campaign_test")
    stored = sorted(
        (json.loads(row["template_input"])["language"], json.loads(row["template_input"])["subject"]) for row in rows
    )
    assert stored == [("en", "News from TEEI"), ("nb", "Nytt fra TEEI")]
    assert client.post(f"{path}/test", data={**fields, "language": "sv"}).status_code == 303  # redirect after POST
    assert len(outbox_rows(family="campaign_test")) == 2, "no version in a language the portal does not write"


def test_a_test_of_a_version_the_campaign_lacks_is_refused(client, admin, people, form_token, draft, outbox_rows):
    company, _ = people(volunteers=1)
    path = f"/admin/campaigns/{draft(f'company:{company}')}"
    page = client.post(f"{path}/test", data={**form_token(path), "language": "nb"}, follow_redirects=True)
    assert "This campaign has no version in that language." in page.get_data(as_text=True)
    assert outbox_rows(family="campaign_test") == []


def test_a_duplicate_keeps_both_versions(ctx, db, people, user_id):
    company, _ = people(volunteers=0)
    campaign = bilingual(db, user_id, f"company:{company}")
    copy = operations.duplicate(db, campaign_id=campaign, admin_id=user_id("writer@teei.example"))
    with db.read() as conn:
        row = conn.execute(sa.text("SELECT name, subject_nb, body_nb FROM campaigns WHERE id = :c"), {"c": copy}).one()
    assert tuple(row) == ("Copy of Winter news", NORWEGIAN["subject_nb"], NORWEGIAN["body_nb"])
