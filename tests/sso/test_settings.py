"""A company's sign-in settings: a manager saves them for approval, an admin puts them in force,
and the company's managers and TEEI's admins read the identity events."""

from __future__ import annotations

import html

import sqlalchemy as sa

from tests.conftest import PASSWORD
from tests.pages import csrf_from
from tests.sso.conftest import CLIENT_SECRET


def form(client, path, **fields):
    token = csrf_from(client.get(path).get_data(as_text=True))
    data = {"join": "invitation", "directory_creates": "invite", "password_sign_in": "y", "csrf_token": token, **fields}
    return client.post(path, data=data)


def settings_fields(issuer, **changes):
    return {
        "issuer": issuer,
        "client_id": "portal",
        "client_secret": CLIENT_SECRET,
        "domains": "acme.example",
        **changes,
    }


def next_step(client, email):
    """Where the sign-in page sends an address: 'provider' or 'password'."""
    token = csrf_from(client.get("/login").get_data(as_text=True))
    answer = client.post("/login", data={"email": email, "csrf_token": token})
    return "provider" if 'id="to-provider" href="/login/sso?domain=' in answer.get_data(as_text=True) else "password"


def test_a_managers_settings_wait_for_an_admins_approval(app, client, auth, make_user, company_id, oidc_provider, db):
    manager = make_user("manager", company="Acme Ltd", email="boss@acme.example")
    auth.login(manager)
    saved = form(client, "/company/sign-in", **settings_fields(oidc_provider.issuer))
    assert saved.status_code == 302
    page = html.unescape(client.get("/company/sign-in").get_data(as_text=True))
    assert "Waiting for approval" in page and CLIENT_SECRET not in page
    auth.logout()
    assert next_step(client, "ada@acme.example") == "password", "not in force before an admin approves"

    admin = app.test_client()
    admin_auth = type(auth)(admin)
    admin_auth.login(make_user("admin"))
    acme = company_id("Acme Ltd")
    token = csrf_from(admin.get(f"/admin/companies/{acme}/sign-in").get_data(as_text=True))
    assert admin.post(f"/admin/companies/{acme}/sign-in/approve", data={"csrf_token": token}).status_code == 302
    assert next_step(client, "ada@acme.example") == "provider"
    assert next_step(client, "ada@elsewhere.example") == "password"


def test_an_admins_settings_are_in_force_at_once(client, auth, make_user, company_id, oidc_provider):
    make_user("manager", company="Acme Ltd")
    auth.login(make_user("admin"))
    path = f"/admin/companies/{company_id('Acme Ltd')}/sign-in"
    assert (
        form(
            client, path, **settings_fields(oidc_provider.issuer, domains="acme.example, @Acme-Labs.example")
        ).status_code
        == 302
    )
    auth.logout()
    assert next_step(client, "x@acme-labs.example") == "provider"


def test_settings_the_portal_cannot_use_are_refused_and_nothing_is_saved(client, auth, make_user, oidc_provider, count):
    make_user("manager", company="Other Co", email="boss@other.example")
    auth.login(make_user("manager", company="Other Co"))
    form(client, "/company/sign-in", **settings_fields(oidc_provider.issuer, domains="other.example"))
    auth.logout()
    auth.login(make_user("manager", company="Acme Ltd"))

    cases = {
        "http://login.example.org": "must be an https:// address",
        "https://127.0.0.1:1": "could not read the provider's discovery document",
        oidc_provider.issuer + "/": "names another issuer",
    }
    for issuer, said in cases.items():
        answer = form(client, "/company/sign-in", **settings_fields(issuer))
        assert answer.status_code == 400 and said in html.unescape(answer.get_data(as_text=True)), issuer
    taken = form(
        client, "/company/sign-in", **settings_fields(oidc_provider.issuer, domains="acme.example other.example")
    )
    assert "other.example is already another company's domain" in html.unescape(taken.get_data(as_text=True))
    no_secret = form(client, "/company/sign-in", **settings_fields(oidc_provider.issuer, client_secret=""))
    assert "Enter the client secret" in no_secret.get_data(as_text=True)
    assert count("company_identity_providers") == 1, "only Other Co's"


def test_the_events_are_for_the_companys_managers_and_teeis_admins(
    app, client, auth, make_user, company_id, set_up_provider, db
):
    set_up_provider()
    acme = company_id("Acme Ltd")
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO identity_events (company_id, at, event, reason) VALUES (:id, '2026-12-01T10:00:00.000000Z', 'sso_refused', 'denied')"
            ),
            {"id": acme},
        )

    auth.login(make_user("manager", company="Acme Ltd"))
    page = html.unescape(client.get("/company/sign-in/events").get_data(as_text=True))
    assert (
        "Sign-in settings approved" in page and "The sign-in was declined at your company's identity provider." in page
    )
    auth.logout()

    auth.login(make_user("manager", company="Other Co"))
    assert "declined" not in client.get("/company/sign-in/events").get_data(as_text=True)
    assert client.get(f"/admin/companies/{acme}/sign-in/events").status_code == 403
    auth.logout()

    auth.login(make_user("employee", company="Acme Ltd"))
    assert client.get("/company/sign-in/events").status_code == 403
    auth.logout()

    auth.login(make_user("admin"))
    assert "declined" in client.get(f"/admin/companies/{acme}/sign-in/events").get_data(as_text=True)


def test_a_manager_of_a_company_keeps_signing_in_with_the_password_when_it_is_allowed(
    client, auth, set_up_provider, make_user
):
    email = make_user("manager", company="Acme Ltd", email="boss@acme.example")
    set_up_provider()
    assert auth.login(email, PASSWORD).status_code == 302
