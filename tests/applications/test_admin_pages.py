"""The admin's pages: who may see them, and deciding through the form."""

import re

import pytest

from portal.core.db import Database


@pytest.fixture
def signed_in_admin(auth, make_user):
    auth.login(make_user("admin"))


def decision_form(client, application_id):
    """The hidden fields of the detail page's form, as the browser would send them."""
    page = client.get(f"/admin/applications/{application_id}").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    seen = re.search(r'name="decisions_seen" type="hidden" value="(\d+)"', page).group(1)
    confirmed = re.search(r'name="confirmed" value="(\w+)"', page).group(1)
    return {"csrf_token": token, "decisions_seen": seen, "confirmed": confirmed}


def any_csrf_token(client):
    page = client.get("/admin/applications").get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


@pytest.mark.parametrize("role", ["manager", "employee"])
def test_other_roles_get_403_on_admin_pages(client, auth, make_user, submit, role):
    application = submit()
    auth.login(make_user(role))
    assert client.get("/admin/applications").status_code == 403
    assert client.get(f"/admin/applications/{application.application_id}").status_code == 403
    token = auth.csrf_token("/")
    response = client.post(
        f"/admin/applications/{application.application_id}/decision",
        data={"decision": "approve", "note": "", "confirmed": "yes", "csrf_token": token},
    )
    assert response.status_code == 403


def test_signed_out_visitors_are_sent_to_sign_in(client, submit):
    response = client.get("/admin/applications")
    assert response.status_code == 302 and response.headers["Location"].startswith("/login")


def test_admin_sees_applications_by_state(client, signed_in_admin, submit, decide):
    submit()
    declined = submit(company_name="Old Mill Ltd", contact_email="pat@oldmill.example")
    decide(declined.application_id, "decline")
    page = client.get("/admin/applications").get_data(as_text=True)

    assert "Partner applications" in page
    assert "Fjord Analytics AS" in page and "Old Mill Ltd" not in page, "new applications first"
    declined_page = client.get("/admin/applications?state=declined").get_data(as_text=True)
    assert "Old Mill Ltd" in declined_page and "Fjord Analytics AS" not in declined_page
    every = client.get("/admin/applications?state=all").get_data(as_text=True)
    assert "Old Mill Ltd" in every and "Fjord Analytics AS" in every and "Showing all 2" in every
    assert (
        'href="/admin/applications">Applications</a><span class="nav-count">1<span class="visually-hidden"> new application<'
        in page
    ), "the admin menu links here, with the count of new applications"


def test_applications_are_searched_and_paged(client, signed_in_admin, submit):
    for n in range(53):
        submit(company_name=f"Company {n:02d}", contact_email=f"c{n}@example.org")
    page = client.get("/admin/applications").get_data(as_text=True)
    assert "Showing 1–50 of 53" in page and "Company 52" in page and "Company 00" not in page
    assert "Company 00" in client.get("/admin/applications?page=2").get_data(as_text=True)
    found = client.get("/admin/applications?q=company 07").get_data(as_text=True)
    assert "Showing all 1" in found and "Company 07" in found


def test_admin_opens_an_application(client, signed_in_admin, submit):
    application = submit()
    page = client.get(f"/admin/applications/{application.application_id}").get_data(as_text=True)
    assert "Fjord Analytics AS" in page and "ingrid@fjord.example" in page and "We would like our analysts" in page
    for value in ("approve", "request_info", "decline"):
        assert f'name="decision" value="{value}"' in page
    assert client.get("/admin/applications/99999").status_code == 404


def test_double_posted_decision_records_one_decision_and_one_email(client, signed_in_admin, submit, count, outbox_rows):
    application = submit()
    url = f"/admin/applications/{application.application_id}/decision"
    form = {
        **decision_form(client, application.application_id),
        "decision": "decline",
        "note": "Not this year.",
        "confirmed": "yes",
    }

    first = client.post(url, data=form)
    second = client.post(url, data=form)

    assert first.status_code == second.status_code == 302
    assert count("application_decisions") == 1
    assert len(outbox_rows(family="application_decision")) == 1
    page = client.get(second.headers["Location"]).get_data(as_text=True)
    assert "Declined. Ingrid Dahl will get an email about it." in page


def test_decision_on_a_closed_application_is_refused_with_a_clear_message(
    client, signed_in_admin, submit, decide, count, outbox_rows
):
    application = submit()
    decide(application.application_id, "decline")
    response = client.post(
        f"/admin/applications/{application.application_id}/decision",
        data={"decision": "approve", "note": "", "confirmed": "yes", "csrf_token": any_csrf_token(client)},
        follow_redirects=True,
    )
    page = response.get_data(as_text=True)

    assert "already declined" in page and "Nothing was saved" in page
    assert count("application_decisions") == 1 and count("invitations") == 0
    assert len(outbox_rows(family="application_decision")) == 1
    assert 'name="decision"' not in page, "a closed application offers no decision buttons"


def test_approve_through_the_form(client, signed_in_admin, submit, count):
    application = submit()
    form = {**decision_form(client, application.application_id), "decision": "approve", "note": "", "confirmed": "yes"}
    response = client.post(
        f"/admin/applications/{application.application_id}/decision", data=form, follow_redirects=True
    )
    page = response.get_data(as_text=True)

    assert "Approved. Fjord Analytics AS is a partner now" in page
    assert count("invitations", "role = 'manager' AND email = 'ingrid@fjord.example'") == 1


@pytest.mark.parametrize(
    "form, message",
    [
        ({"decision": "request_info", "note": ""}, "Say what information you need"),
        ({"decision": "delete", "note": ""}, "Choose approve, decline or ask for more information."),
        ({"note": "no decision"}, "Choose approve, decline or ask for more information."),
    ],
)
def test_bad_decision_input_shows_errors_and_writes_nothing(client, signed_in_admin, submit, count, form, message):
    application = submit()
    data = {**decision_form(client, application.application_id), **form}
    response = client.post(f"/admin/applications/{application.application_id}/decision", data=data)

    assert response.status_code == 400
    assert message in response.get_data(as_text=True)
    assert count("application_decisions") == 0


def test_busy_database_tells_the_admin_to_try_again(ctx, client, signed_in_admin, submit, settings, count):
    application = submit()
    form = {
        **decision_form(client, application.application_id),
        "decision": "decline",
        "note": "Kept note",
        "confirmed": "yes",
    }
    original = ctx.db
    impatient = Database(settings.database_url, busy_timeout_ms=20)
    holder = Database(settings.database_url)
    ctx.db = impatient
    try:
        client.get("/")  # sign-in check reads before the lock is taken
        with holder.write():
            response = client.post(f"/admin/applications/{application.application_id}/decision", data=form)
    finally:
        ctx.db = original
        impatient.dispose()
        holder.dispose()
    page = response.get_data(as_text=True)

    assert response.status_code == 503
    assert "The database was busy, so nothing was saved. Please try again." in page
    assert "Kept note" in page, "the typed note is kept for the retry"
    assert count("application_decisions") == 0


def test_the_admin_is_warned_when_the_company_already_exists(client, signed_in_admin, submit, make_user):
    make_user("manager", company="Fjord Analytics AS")
    application = submit()
    page = client.get(f"/admin/applications/{application.application_id}").get_data(as_text=True)
    assert "A partner company called Fjord Analytics AS already exists" in page


def test_approve_and_decline_ask_for_confirmation_first(client, auth, make_user, submit, count, outbox_rows):
    application = submit()
    auth.login(make_user("admin"))
    url = f"/admin/applications/{application.application_id}/decision"
    form = {**decision_form(client, application.application_id), "decision": "decline", "note": "Not this year."}
    asked = client.post(url, data=form)
    page = asked.get_data(as_text=True)
    assert asked.status_code == 200 and "A decline is final." in page and "Not this year." in page
    assert 'name="confirmed" value="yes"' in page and "Yes, decline" in page
    assert count("application_decisions") == 0 and outbox_rows(family="application_decision") == []
    approve = client.post(url, data={**form, "decision": "approve"}).get_data(as_text=True)
    assert "Yes, approve and invite" in approve and count("companies") == 0
    confirmed = client.post(url, data={**form, "confirmed": "yes"})
    assert confirmed.status_code == 302 and count("application_decisions") == 1


def test_asking_for_more_information_asks_first(client, auth, make_user, submit, count, outbox_rows):
    application = submit()
    auth.login(make_user("admin"))
    url = f"/admin/applications/{application.application_id}/decision"
    form = {**decision_form(client, application.application_id), "decision": "request_info", "note": "How many?"}
    asked = client.post(url, data=form)
    page = asked.get_data(as_text=True)
    assert asked.status_code == 200 and "Ask Fjord Analytics AS for more information?" in page
    assert "How many?" in page and "the email cannot be called back" in page and "Yes, send the question" in page
    assert count("application_decisions") == 0 and outbox_rows(family="application_decision") == []
    confirmed = client.post(url, data={**form, "confirmed": "yes"})
    assert confirmed.status_code == 302 and count("application_decisions") == 1
    assert len(outbox_rows(family="application_decision")) == 1


def test_the_contracts_decision_fields_alone_decide_at_once(client, auth, make_user, submit, count):
    """A script posting `decision` and `note` (CONTRACT.md) is not sent to a confirmation page."""
    application = submit()
    auth.login(make_user("admin"))
    token = decision_form(client, application.application_id)["csrf_token"]
    response = client.post(
        f"/admin/applications/{application.application_id}/decision",
        data={"decision": "decline", "note": "Not this year.", "csrf_token": token},
    )
    assert response.status_code == 302 and count("application_decisions") == 1


def nav_count(page: str) -> int | None:
    """The number the admin menu shows beside "Applications", or None when it shows none."""
    found = re.search(r'href="/admin/applications">Applications</a><span class="nav-count">(\d+)<', page)
    return int(found.group(1)) if found else None


def test_the_admin_menu_counts_new_applications_on_every_page(client, signed_in_admin, submit, decide):
    assert nav_count(client.get("/admin/").get_data(as_text=True)) is None, "nothing to decide: no number"
    applications = [submit(company_name=f"Company {n}", contact_email=f"c{n}@x.example") for n in range(3)]
    assert nav_count(client.get("/admin/").get_data(as_text=True)) == 3
    assert nav_count(client.get("/admin/demo-requests").get_data(as_text=True)) == 3
    decide(applications[0].application_id, "decline")
    decide(applications[1].application_id, "request_info", note="How many offices?")
    assert nav_count(client.get("/admin/").get_data(as_text=True)) == 1, "only applications nobody decided yet"


def test_an_approved_application_links_to_the_company_it_created(client, signed_in_admin, submit, decide, db):
    application = submit(company_name="Lumen Retail")
    decide(application.application_id, "approve")
    with db.read() as conn:
        company_id = conn.exec_driver_sql("SELECT id FROM companies WHERE name = 'Lumen Retail'").scalar_one()
    link = f'href="/admin/companies/{company_id}"'
    assert link in client.get(f"/admin/applications/{application.application_id}").get_data(as_text=True)
    assert link in client.get("/admin/applications?state=approved").get_data(as_text=True)
    company_page = client.get(f"/admin/companies/{company_id}")
    assert company_page.status_code == 200 and "Lumen Retail" in company_page.get_data(as_text=True)
