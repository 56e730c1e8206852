import sqlalchemy as sa

from portal.core import clock
from tests.account.conftest import csrf_from


def post_with_csrf(client, form_path, action_path=None, **data):
    token = csrf_from(client.get(form_path).get_data(as_text=True))
    return client.post(action_path or form_path, data={"csrf_token": token, **data})


def add_session(db, user_id, company_id, held_at):
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO attendance_sessions (platform, session_id, volunteer_email, user_id, company_id, held_at, "
                "minutes, status, updated_at, received_at, source) SELECT 'language', :sid, email, id, :company, :held, "
                "60, 'attended', :held, :held, 'api' FROM users WHERE id = :user"
            ),
            {"sid": f"s-{held_at}", "company": company_id, "held": held_at, "user": user_id},
        )


def company_of(db, email):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT company_id FROM users WHERE email = :e"), {"e": email}).scalar_one()


def test_a_manager_sees_their_people_and_nobody_elses(client, auth, make_user):
    manager = make_user("manager", company="Acme Ltd")
    colleague = make_user("employee", company="Acme Ltd")
    stranger = make_user("employee", company="Other Co")
    auth.login(manager)
    page = client.get("/people").get_data(as_text=True)
    assert colleague in page and manager in page and stranger not in page
    assert "Showing all 2" in page


def test_deactivating_a_colleague_asks_first_then_ends_their_access(client, auth, make_user, user_id, db, count):
    manager = make_user("manager", company="Acme Ltd")
    leaver = make_user("employee", company="Acme Ltd")
    leaver_id = user_id(leaver)
    confirm = client.get(f"/people/{leaver_id}/deactivate")
    assert confirm.status_code == 302  # signed out: to the login page
    auth.login(manager)
    confirm = client.get(f"/people/{leaver_id}/deactivate").get_data(as_text=True)
    assert "can no longer sign in" in confirm and "stay in your company" in confirm
    assert count("users", "deactivated_at IS NOT NULL") == 0, "opening the confirmation changes nothing"
    response = post_with_csrf(client, f"/people/{leaver_id}/deactivate")
    assert response.status_code == 302
    assert "is deactivated" in client.get("/people").get_data(as_text=True)
    assert leaver not in client.get("/people").get_data(as_text=True)
    assert leaver in client.get("/people?state=deactivated").get_data(as_text=True)
    auth.logout()
    assert auth.login(leaver).status_code == 401


def test_a_deactivated_colleague_is_signed_out_at_once(app, auth, make_user, user_id, db):
    AuthActions = type(auth)
    leaver = make_user("employee", company="Acme Ltd")
    manager = make_user("manager", company="Acme Ltd")
    leaver_client, manager_client = app.test_client(), app.test_client()
    AuthActions(leaver_client).login(leaver)
    assert leaver_client.get("/account").status_code == 200
    AuthActions(manager_client).login(manager)
    post_with_csrf(manager_client, f"/people/{user_id(leaver)}/deactivate")
    assert leaver_client.get("/account").status_code == 302  # the old session no longer signs them in


def test_past_hours_stay_with_the_company_and_later_ones_count_for_nobody(client, auth, make_user, user_id, db, app):
    manager = make_user("manager", company="Acme Ltd")
    leaver = make_user("employee", company="Acme Ltd")
    acme = company_of(db, leaver)
    add_session(db, user_id(leaver), acme, "2026-01-10T10:00:00.000000Z")
    auth.login(manager)
    post_with_csrf(client, f"/people/{user_id(leaver)}/deactivate")
    with db.read() as conn:
        kept = conn.execute(sa.text("SELECT company_id FROM attendance_sessions")).scalar_one()
        membership = conn.execute(
            sa.text("SELECT ended_at FROM company_memberships WHERE user_id = :u"), {"u": user_id(leaver)}
        ).scalar_one()
    assert kept == acme and membership is not None
    # A session the platform reports after the colleague left: recomputed like every session.
    from portal.attendance.memberships import company_at

    with db.read() as conn:
        later = conn.execute(
            sa.text(f"SELECT {company_at(':u', ':held')}"),
            {"u": user_id(leaver), "held": "2099-01-01T00:00:00.000000Z"},
        ).scalar()
        earlier = conn.execute(
            sa.text(f"SELECT {company_at(':u', ':held')}"),
            {"u": user_id(leaver), "held": "2026-01-10T10:00:00.000000Z"},
        ).scalar()
    assert later is None and earlier == acme


def test_emails_waiting_for_a_colleague_who_left_are_cancelled(
    client, auth, make_user, user_id, make_outbox_row, outbox_row
):
    """A report with the company's figures, or a campaign, must not reach someone who has left."""
    manager = make_user("manager", company="Acme Ltd")
    leaver = make_user("employee", company="Acme Ltd")
    waiting = make_outbox_row(recipient=leaver, publish=True)
    # Claimed, then released after a wait for a rate slot: its first attempt is stamped, nothing was sent.
    waited = make_outbox_row(
        recipient=leaver, status="retry", provider_message_id=None, first_attempt_at="2026-12-01T10:00:00.000000Z"
    )
    maybe_sent = make_outbox_row(
        recipient=leaver,
        status="retry",
        provider_message_id=None,
        first_attempt_at="2026-12-01T10:00:00.000000Z",
        outcome_unknown=1,
    )
    someone_else = make_outbox_row(recipient=manager, publish=True)
    auth.login(manager)
    assert post_with_csrf(client, f"/people/{user_id(leaver)}/deactivate").status_code == 302
    assert (outbox_row(waiting)["status"], outbox_row(waiting)["last_error"]) == ("cancelled", "recipient_deactivated")
    assert outbox_row(waited)["status"] == "cancelled", "no request reached the provider: deactivation wins"
    assert outbox_row(maybe_sent)["status"] == "retry", "it may have gone out: its delivery decides"
    assert outbox_row(someone_else)["status"] == "enqueued"


def test_a_campaign_written_after_someone_left_leaves_them_out(ctx, make_user, user_id, outbox_rows):
    from portal.campaigns import operations as campaigns
    from portal.campaigns.sending import campaign_pass
    from portal.people.operations import deactivate_colleague

    manager = make_user("manager", company="Acme Ltd")
    leaver = make_user("employee", company="Acme Ltd")
    stays = make_user("employee", company="Acme Ltd")
    with ctx.db.read() as conn:
        company = conn.execute(sa.text("SELECT id FROM companies WHERE name = 'Acme Ltd'")).scalar_one()
    campaign = campaigns.create_campaign(
        ctx.db, admin_id=1, name="News", subject="News", body="Hello", audience=f"company:{company}"
    )
    campaigns.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)  # the list is fixed now
    deactivate_colleague(ctx.db, company_id=company, user_id=user_id(leaver), acting_user_id=user_id(manager))
    campaign_pass(ctx)
    assert sorted(r["recipient"] for r in outbox_rows(family="campaign")) == sorted([manager, stays])


def test_a_manager_cannot_deactivate_themselves_or_another_companys_people(client, auth, make_user, user_id, count):
    manager = make_user("manager", company="Acme Ltd")
    stranger = make_user("employee", company="Other Co")
    auth.login(manager)
    assert client.get(f"/people/{user_id(stranger)}/deactivate").status_code == 404
    response = post_with_csrf(client, "/people/managers/new", f"/people/{user_id(manager)}/deactivate")
    assert response.status_code == 302
    assert "cannot deactivate your own account" in client.get("/people").get_data(as_text=True)
    assert count("users", "deactivated_at IS NOT NULL") == 0


def test_people_are_searched_and_paged(client, auth, make_user, db):
    manager = make_user("manager", company="Acme Ltd")
    for n in range(55):
        make_user("employee", company="Acme Ltd", email=f"volunteer{n:02d}@acme.example")
    auth.login(manager)
    first = client.get("/people").get_data(as_text=True)
    assert "Showing 1–50 of 56" in first and "Page 1 of 2" in first
    second = client.get("/people?page=2").get_data(as_text=True)
    assert "Showing 51–56 of 56" in second
    found = client.get("/people?q=volunteer07").get_data(as_text=True)
    assert "Showing all 1" in found and "volunteer07@acme.example" in found
    assert "Nobody matches." in client.get("/people?q=100%25").get_data(as_text=True)


def test_a_manager_adds_a_second_manager(client, auth, make_user, outbox_rows, ctx, db):
    import json

    from portal.email_families import FAMILIES

    manager = make_user("manager", company="Northwind Logistics")
    auth.login(manager)
    response = post_with_csrf(client, "/people/managers/new", email="grace@northwind.example")
    assert response.status_code == 302
    (row,) = outbox_rows(family="manager_invitation")
    assert row["recipient"] == "grace@northwind.example"
    email = FAMILIES["manager_invitation"].render(json.loads(row["template_input"]), ctx.settings, now=clock.utcnow())
    assert email.subject == "You are invited to manage volunteering at Northwind Logistics"
    assert "'s" not in email.subject
    listed = client.get("/invitations").get_data(as_text=True)
    assert "grace@northwind.example" in listed and "Manager" in listed


def test_inviting_a_manager_tells_nothing_about_accounts_elsewhere(client, auth, make_user, count, outbox_rows):
    """Another company's volunteer, an admin and a new address get the same answer (an invitation);
    only a colleague the manager already sees on the people page is refused."""
    manager = make_user("manager", company="Acme Ltd")
    colleague = make_user("employee", company="Acme Ltd")
    stranger = make_user("employee", company="Other Co")
    admin = make_user("admin")
    auth.login(manager)
    refused = post_with_csrf(client, "/people/managers/new", email=colleague)
    assert refused.status_code == 400 and "already has an account here" in refused.get_data(as_text=True)
    assert count("invitations") == 0
    for address in (stranger, admin, "newcomer@acme.example"):
        answer = post_with_csrf(client, "/people/managers/new", email=address)
        assert (answer.status_code, answer.headers["Location"]) == (302, "/invitations"), address
    assert sorted(r["recipient"] for r in outbox_rows(family="manager_invitation")) == sorted(
        [stranger, admin, "newcomer@acme.example"]
    )


def identity_events(db, company_id):
    with db.read() as conn:
        return [
            tuple(row)
            for row in conn.execute(
                sa.text("SELECT event, user_id, actor_user_id FROM identity_events WHERE company_id = :c ORDER BY id"),
                {"c": company_id},
            )
        ]


def test_a_colleague_who_left_is_reactivated_after_a_confirmation_and_signs_in_again(
    client, auth, app, make_user, user_id, db
):
    manager = make_user("manager", company="Acme Ltd")
    back = make_user("employee", company="Acme Ltd")
    other_company = make_user("employee", company="Other Co")
    auth.login(manager)
    assert post_with_csrf(client, f"/people/{user_id(back)}/deactivate").status_code == 302
    left = client.get("/people?state=deactivated").get_data(as_text=True)
    assert f'href="/people/{user_id(back)}/reactivate"' in left  # the list links to the confirmation

    page = client.get(f"/people/{user_id(back)}/reactivate").get_data(as_text=True)
    assert "Reactivate" in page and "can sign in again" in page and back in page
    # A post without the confirmation's "Yes" answers the page again and changes nothing.
    unconfirmed = post_with_csrf(client, "/people?state=deactivated", f"/people/{user_id(back)}/reactivate")
    assert unconfirmed.status_code == 200 and "can sign in again" in unconfirmed.get_data(as_text=True)
    assert type(auth)(app.test_client()).login(back).status_code == 401, "still deactivated"

    answer = post_with_csrf(client, "/people?state=deactivated", f"/people/{user_id(back)}/reactivate", confirmed="yes")
    assert answer.status_code == 302
    assert "is active again" in client.get(answer.location).get_data(as_text=True)
    again = post_with_csrf(client, "/people", f"/people/{user_id(back)}/reactivate", confirmed="yes")
    assert "is not a deactivated member" in client.get(again.location).get_data(as_text=True)
    assert (
        post_with_csrf(client, "/people", f"/people/{user_id(other_company)}/reactivate", confirmed="yes").status_code
        == 404
    )
    with db.read() as conn:
        open_memberships = conn.execute(
            sa.text("SELECT COUNT(*) FROM company_memberships WHERE user_id = :u AND ended_at IS NULL"),
            {"u": user_id(back)},
        ).scalar()
    assert open_memberships == 1, "they belong to the company again, from now"
    other = app.test_client()
    assert type(auth)(other).login(back).status_code == 302, "they sign in again"
    # Both steps are the company's identity events, with the manager who took them; once each.
    acme = company_of(db, manager)
    assert identity_events(db, acme) == [
        ("deactivated", user_id(back), user_id(manager)),
        ("reactivated", user_id(back), user_id(manager)),
    ]
    assert "Reactivated on the People page" in client.get("/company/sign-in/events").get_data(as_text=True)


def test_a_volunteer_is_made_a_manager_after_a_confirmation(client, auth, app, make_user, user_id, db):
    manager = make_user("manager", company="Acme Ltd")
    volunteer = make_user("employee", company="Acme Ltd")
    left = make_user("employee", company="Acme Ltd")
    stranger = make_user("employee", company="Other Co")
    their_browser = app.test_client()
    type(auth)(their_browser).login(volunteer)
    assert their_browser.get("/people").status_code == 403
    auth.login(manager)
    post_with_csrf(client, f"/people/{user_id(left)}/deactivate")
    listed = client.get("/people").get_data(as_text=True)
    assert f'href="/people/{user_id(volunteer)}/make-manager"' in listed
    assert f'href="/people/{user_id(manager)}/make-manager"' not in listed  # not for a manager

    page = client.get(f"/people/{user_id(volunteer)}/make-manager").get_data(as_text=True)
    assert "a manager?" in page and "identity provider" in page
    unconfirmed = post_with_csrf(client, "/people", f"/people/{user_id(volunteer)}/make-manager")
    assert unconfirmed.status_code == 200
    assert their_browser.get("/people").status_code == 403, "nothing changed without the Yes"

    done = post_with_csrf(client, "/people", f"/people/{user_id(volunteer)}/make-manager", confirmed="yes")
    assert "is now a manager" in client.get(done.location).get_data(as_text=True)
    # Their own session, already open, has the new role from its next page.
    assert their_browser.get("/people").status_code == 200
    assert their_browser.get("/reports").status_code == 200

    # Bad input changes nothing: a manager already, a colleague who left, another company's volunteer.
    for person, answer in ((volunteer, "Only an active volunteer"), (left, "Only an active volunteer")):
        refused = post_with_csrf(client, "/people", f"/people/{user_id(person)}/make-manager", confirmed="yes")
        assert answer in client.get(refused.location).get_data(as_text=True)
    assert (
        post_with_csrf(client, "/people", f"/people/{user_id(stranger)}/make-manager", confirmed="yes").status_code
        == 404
    )
    with db.read() as conn:
        roles = dict(conn.execute(sa.text("SELECT email, role FROM users WHERE role != 'admin'")).all())
    assert roles == {manager: "manager", volunteer: "manager", left: "employee", stranger: "employee"}
    acme = company_of(db, manager)
    assert [e for e in identity_events(db, acme) if e[0] == "made_manager"] == [
        ("made_manager", user_id(volunteer), user_id(manager))
    ]


def test_add_a_manager_asks_their_name_and_the_emails_language(client, auth, make_user, outbox_rows, ctx, db, count):
    import json

    from portal.email_families import FAMILIES

    manager = make_user("manager", company="Northwind Logistics")
    auth.login(manager)
    form = client.get("/people/managers/new").get_data(as_text=True)
    assert 'name="name"' in form and 'name="language"' in form and 'lang="nb"' in form
    bad = post_with_csrf(client, "/people/managers/new", email="grace@northwind.example", name="Grace", language="xx")
    assert bad.status_code == 400 and "Choose one of the options offered" in bad.get_data(as_text=True)
    too_long = post_with_csrf(client, "/people/managers/new", email="grace@northwind.example", name="G" * 121)
    assert too_long.status_code == 400
    assert count("invitations") == 0 and outbox_rows(family="manager_invitation") == []

    sent = post_with_csrf(
        client, "/people/managers/new", email="grace@northwind.example", name="Grace Hopper", language="nb"
    )
    assert sent.status_code == 302
    (row,) = outbox_rows(family="manager_invitation")
    email = FAMILIES["manager_invitation"].render(json.loads(row["template_input"]), ctx.settings, now=clock.utcnow())
    assert "Grace Hopper" in email.text and "Grace Hopper" in email.html  # greeted by name
    assert json.loads(row["template_input"])["language"] == "nb"
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT name FROM invitations")).scalar_one() == "Grace Hopper"


def test_people_says_when_each_colleague_joined_the_company(client, auth, make_user, user_id, db):
    manager = make_user("manager", company="Acme Ltd")
    colleague = make_user("employee", company="Acme Ltd")
    with db.write() as conn:  # they joined in March 2025; their account row was made today (an import, a seed)
        conn.execute(
            sa.text("UPDATE company_memberships SET started_at = '2025-03-04T09:00:00.000000Z' WHERE user_id = :u"),
            {"u": user_id(colleague)},
        )
    auth.login(manager)
    row = client.get("/people").get_data(as_text=True).split(colleague)[1].split("</tr>")[0]
    assert "4 Mar 2025" in row


def test_the_demo_says_when_its_colleagues_joined_not_the_day_it_was_seeded(client, auth, db, settings):
    from datetime import UTC, datetime, timedelta
    from zoneinfo import ZoneInfo

    from portal.seed import DEMO_PASSWORD, HISTORY_VOLUNTEERS, seed_demo

    seed_demo(db, secret_key=settings.secret_key, history=True)
    auth.login("manager@northwind.example", DEMO_PASSWORD)
    email, _name, _programme, began, _every = HISTORY_VOLUNTEERS[0]  # began 56 weeks ago
    joined = (datetime.now(UTC) - timedelta(weeks=began + 1)).astimezone(ZoneInfo("Europe/Oslo")).date()
    row = client.get(f"/people?q={email}").get_data(as_text=True).split(f">{email}</td>")[1].split("</tr>")[0]
    assert f"{joined.day} {joined:%b %Y}" in row
    with db.read() as conn:  # the account, too, was made when they joined
        created = conn.execute(sa.text("SELECT created_at FROM users WHERE email = :e"), {"e": email}).scalar_one()
    assert created[:10] <= (datetime.now(UTC) - timedelta(weeks=began)).date().isoformat()
