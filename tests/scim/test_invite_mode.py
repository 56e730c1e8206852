"""A company whose directory invites (the default): a User it creates gets the Invitations page's
invitation, and its SCIM id keeps naming them before they accept and after."""

from __future__ import annotations

import html
import re

import sqlalchemy as sa

from portal.core import clock
from portal.core.programmes import PROGRAMMES
from portal.invitations.operations import accept_invitation
from portal.invitations.tokens import token_for, token_hash
from portal.scim import create_token
from tests.pages import csrf_from
from tests.scim.test_users import PATCH, account, new_user
from tests.sso.test_settings import form, settings_fields

DEACTIVATE = {"schemas": [PATCH], "Operations": [{"op": "replace", "value": {"active": False}}]}


def invitation(db, email):
    with db.read() as conn:
        return (
            conn.execute(
                sa.text(
                    "SELECT id, programme, department, name, revoked_at, accepted_at, token_nonce "
                    "FROM invitations WHERE email = :e"
                ),
                {"e": email},
            )
            .mappings()
            .first()
        )


def accept(ctx, db, email):
    nonce = invitation(db, email)["token_nonce"]
    return accept_invitation(
        db, token_hash=token_hash(token_for(ctx.settings.secret_key, nonce)), name="Ada L", password="a-long-password"
    )


def test_creating_a_user_sends_one_invitation_and_makes_no_account(scim_company, directory, db, count):
    company, token = scim_company(creates="invite")
    scim = directory(token)

    created = scim.post("/Users", json=new_user("ada@acme.example"))

    assert created.status_code == 201, created.text
    body = created.json()
    assert body["id"].startswith("inv-") and body["active"] is True and body["userName"] == "ada@acme.example"
    assert created.headers["Location"].endswith(f"/scim/v2/Users/{body['id']}")
    assert account(db, "ada@acme.example") is None, "no account before they accept"
    invited = invitation(db, "ada@acme.example")
    assert (invited["programme"], invited["department"], invited["name"]) == ("language", "Engineering", "Ada Lovelace")
    assert count("email_outbox", "family = 'invitation' AND recipient = :r", r="ada@acme.example") == 1
    assert scim.get(f"/Users/{body['id']}").json()["userName"] == "ada@acme.example"
    found = scim.get("/Users", params={"filter": 'userName eq "ada@acme.example"'}).json()
    assert found["totalResults"] == 1 and found["Resources"][0]["id"] == body["id"]
    again = scim.post("/Users", json=new_user("ada@acme.example"))
    assert again.status_code == 409 and again.json()["scimType"] == "uniqueness"
    assert count("email_outbox", "family = 'invitation'") == 1, "one invitation, one email"


def test_deactivating_before_acceptance_revokes_the_invitation(ctx, scim_company, directory, db, count):
    _company, token = scim_company(creates="invite")
    scim = directory(token)
    scim_id = scim.post("/Users", json=new_user("ada@acme.example")).json()["id"]

    answer = scim.patch(f"/Users/{scim_id}", json=DEACTIVATE)

    assert answer.status_code == 200 and answer.json()["active"] is False
    assert invitation(db, "ada@acme.example")["revoked_at"] is not None
    try:
        accept(ctx, db, "ada@acme.example")
    except Exception as refused:  # noqa: BLE001 - the accept page's refusal
        assert "no longer valid" in str(refused)
    else:
        raise AssertionError("a revoked invitation was accepted")
    reactivate = {"schemas": [PATCH], "Operations": [{"op": "replace", "path": "active", "value": "True"}]}
    assert scim.patch(f"/Users/{scim_id}", json=reactivate).json()["active"] is True
    assert invitation(db, "ada@acme.example")["revoked_at"] is None, "invited again"
    assert count("email_outbox", "family = 'invitation'") == 2, "with a new link"
    assert scim.delete(f"/Users/{scim_id}").status_code == 204
    assert invitation(db, "ada@acme.example")["revoked_at"] is not None
    assert scim.get(f"/Users/{scim_id}").status_code == 404


def test_a_managers_open_invitation_is_adopted_without_a_second_email(scim_company, directory, client, auth, count):
    _company, token = scim_company(creates="invite")
    auth.login("boss@acme.example")
    page = client.get("/invitations/new").get_data(as_text=True)
    sent = client.post(
        "/invitations/new",
        data={"emails": "ada@acme.example", "programme": "language", "language": "en", "csrf_token": csrf_from(page)},
    )
    assert sent.status_code == 302 and count("email_outbox", "family = 'invitation'") == 1

    created = directory(token).post("/Users", json=new_user("ada@acme.example"))

    assert created.status_code == 201 and created.json()["id"].startswith("inv-")
    assert count("email_outbox", "family = 'invitation'") == 1 and count("invitations") == 1


def test_after_acceptance_the_same_id_deactivates_and_deletes_the_account(ctx, scim_company, directory, db):
    _company, token = scim_company(creates="invite")
    scim = directory(token)
    scim_id = scim.post("/Users", json=new_user("ada@acme.example")).json()["id"]
    accept(ctx, db, "ada@acme.example")
    assert account(db, "ada@acme.example")["department"] == "Engineering"

    shown = scim.get(f"/Users/{scim_id}").json()
    assert shown["id"] == scim_id and shown["active"] is True
    assert scim.get("/Users", params={"filter": 'userName eq "ada@acme.example"'}).json()["totalResults"] == 1
    answer = scim.patch(f"/Users/{scim_id}", json=DEACTIVATE)

    assert answer.status_code == 200 and answer.json()["active"] is False
    assert account(db, "ada@acme.example")["deactivated_at"] is not None
    assert scim.delete(f"/Users/{scim_id}").status_code == 204
    assert scim.get(f"/Users/{scim_id}").status_code == 404


def test_provision_mode_makes_the_account_and_sends_nothing(scim_company, directory, db, count):
    _company, token = scim_company(creates="provision")
    created = directory(token).post("/Users", json=new_user("ada@acme.example"))
    assert created.status_code == 201 and not created.json()["id"].startswith("inv-")
    assert account(db, "ada@acme.example")["programme"] == "language"
    assert count("invitations") == 0 and count("email_outbox") == 0


def test_the_sign_in_settings_page_saves_the_mode(client, auth, make_user, company_id, oidc_provider, ctx):
    from portal.sso import directory_creates

    auth.login(make_user("admin"))
    make_user("manager", company="Acme Ltd")
    acme = company_id("Acme Ltd")
    path = f"/admin/companies/{acme}/sign-in"
    assert form(client, path, **settings_fields(oidc_provider.issuer)).status_code == 302
    assert directory_creates(ctx.db, acme) == "invite", "invite unless chosen otherwise"
    page = html.unescape(client.get(path).get_data(as_text=True))
    assert "Gets an invitation email" in page and "Gets a volunteer account at once" in page

    refused = form(client, path, **settings_fields(oidc_provider.issuer, directory_creates="provision"))
    assert refused.status_code == 400 and "choose their programme above" in html.unescape(
        refused.get_data(as_text=True)
    )
    assert directory_creates(ctx.db, acme) == "invite", "an account needs a programme: nothing saved"

    saved = form(client, path, **settings_fields(oidc_provider.issuer, directory_creates="provision", join="language"))
    assert saved.status_code == 302

    assert directory_creates(ctx.db, acme) == "provision"
    page = client.get(path).get_data(as_text=True)
    assert re.search(r'<input checked[^>]*value="provision"', page), "the page shows the saved choice"


def test_a_company_without_sign_in_settings_invites_to_the_first_programme(ctx, make_user, company_id, directory, db):
    make_user("manager", company="Acme Ltd", email="boss@acme.example")
    token = create_token(ctx.db, company_id=company_id("Acme Ltd"), acting_user_id=None, now=clock.utcnow())

    created = directory(token).post("/Users", json=new_user("ada@acme.example"))

    assert created.status_code == 201 and created.json()["id"].startswith("inv-"), created.text
    assert invitation(db, "ada@acme.example")["programme"] == next(iter(PROGRAMMES))
    assert account(db, "ada@acme.example") is None
