"""Sign-in through a company's own OpenID Connect provider, against a real provider process."""

from __future__ import annotations

import html
import secrets
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
import sqlalchemy as sa

from portal.core import clock
from portal.core.sealed import unseal
from portal.sso import oidc, operations
from portal.sso.oidc import SignInRefused
from tests.conftest import PASSWORD
from tests.pages import csrf_from
from tests.sso.conftest import CLIENT_ID, CLIENT_SECRET, local


def signed_in_as(client) -> str | None:
    """Who the account page says is signed in, or None when it sends the browser to sign in."""
    page = client.get("/account")
    return page.get_data(as_text=True) if page.status_code == 200 else None


def words(answer) -> str:
    return html.unescape(answer.get_data(as_text=True))


def events(db, company_id):
    with db.read() as conn:
        return [
            tuple(row)
            for row in conn.execute(
                sa.text("SELECT event, reason FROM identity_events WHERE company_id = :id ORDER BY id"),
                {"id": company_id},
            )
        ]


def test_an_address_at_the_companys_domain_signs_in_through_its_provider(
    client, provider_sign_in, set_up_provider, person_at_provider, make_user, db
):
    company = set_up_provider()
    make_user("employee", company="Acme Ltd", email="ada@acme.example")
    subject = person_at_provider("ada@acme.example")

    authorization_url = provider_sign_in.to_provider("Ada@Acme.example")
    asked = parse_qs(urlsplit(authorization_url).query)
    assert asked["client_id"] == [CLIENT_ID] and asked["code_challenge_method"] == ["S256"]
    assert asked["nonce"] and asked["state"] and asked["code_challenge"]
    answer = provider_sign_in.back_from_provider(authorization_url, subject)

    assert answer.status_code == 302 and answer.location.endswith("/")
    assert "ada@acme.example" in signed_in_as(client)
    assert events(db, company)[-1] == ("sso_sign_in", None)


def test_an_address_elsewhere_goes_on_to_the_password(client, set_up_provider, make_user):
    set_up_provider()
    email = make_user("manager", company="Other Co", email="olga@other.example")
    token = csrf_from(client.get("/login").get_data(as_text=True))
    assert 'type="password"' not in client.get("/login").get_data(as_text=True), "the address comes first"

    step = client.post("/login", data={"email": email, "csrf_token": token})
    assert step.status_code == 200 and 'type="password"' in step.get_data(as_text=True)
    signed = client.post("/login", data={"email": email, "password": PASSWORD, "csrf_token": token})
    assert signed.status_code == 302 and email in signed_in_as(client)


def test_the_linked_identity_signs_in_after_the_address_changes_at_the_provider(
    client, provider_sign_in, set_up_provider, person_at_provider, make_user, oidc_provider, auth
):
    set_up_provider()
    make_user("employee", company="Acme Ltd", email="ada@acme.example")
    subject = person_at_provider("ada@acme.example")
    provider_sign_in.sign_in("ada@acme.example", subject)
    auth.logout()

    oidc_provider.set_user(subject, email="ada.lovelace@acme.example", name="Ada")
    provider_sign_in.sign_in("ada.lovelace@acme.example", subject)
    assert "ada@acme.example" in signed_in_as(client), "the same account, found by (issuer, subject)"


def test_denied_at_the_provider_is_a_page_and_signs_nobody_in(client, provider_sign_in, set_up_provider, make_user, db):
    company = set_up_provider()
    make_user("employee", company="Acme Ltd", email="ada@acme.example")

    answer = provider_sign_in.sign_in("ada@acme.example", None)

    assert answer.status_code == 400
    page = words(answer)
    assert "declined at your company's identity provider" in page and "Nobody was signed in." in page
    assert signed_in_as(client) is None
    assert events(db, company)[-1] == ("sso_refused", "denied")


def test_a_replayed_answer_signs_nobody_in(
    app, client, provider_sign_in, set_up_provider, person_at_provider, make_user, auth
):
    set_up_provider()
    make_user("employee", company="Acme Ltd", email="ada@acme.example")
    authorization_url = provider_sign_in.to_provider("ada@acme.example")
    state = parse_qs(urlsplit(authorization_url).query)["state"][0]
    callback = local(provider_sign_in.provider.answer(authorization_url, person_at_provider("ada@acme.example")))
    assert client.get(callback).status_code == 302
    auth.logout()

    # The same answer again, from a copy of the browser's cookie that still holds the state.
    with client.session_transaction() as session:
        session["sso_state"] = state
    replay = client.get(callback)
    assert replay.status_code == 400 and "already used" in words(replay)
    assert signed_in_as(client) is None

    # ... and from another browser, which was never given the state.
    other = app.test_client()
    assert other.get(callback).status_code == 400 and signed_in_as(other) is None


def test_an_answer_more_than_ten_minutes_after_the_start_signs_nobody_in(ctx, set_up_provider, oidc_provider):
    company = set_up_provider()
    provider = operations.company_provider(ctx.db, company)
    start = clock.utcnow()
    url, state = operations.start_sign_in(ctx.db, ctx.settings, provider, now=start)
    callback = parse_qs(urlsplit(oidc_provider.answer(url, "someone")).query)

    with pytest.raises(SignInRefused) as refused:
        operations.finish_sign_in(
            ctx.db,
            ctx.settings,
            state=state,
            browser_state=state,
            code=callback["code"][0],
            error=None,
            now=start + operations.REQUEST_LIFETIME + timedelta(seconds=1),
        )
    assert refused.value.reason == "request_expired"


@pytest.fixture
def real_id_token(oidc_provider, person_at_provider):
    """An ID token the real provider signed for the client `another-app`, with the nonce `the-nonce`."""
    discovery = oidc.discover(oidc_provider.issuer)
    verifier = secrets.token_urlsafe(48)
    url = oidc.authorization_url(
        discovery,
        client_id="another-app",
        redirect_uri="http://127.0.0.1:9/cb",
        state="s",
        nonce="the-nonce",
        code_verifier=verifier,
    )
    code = parse_qs(urlsplit(oidc_provider.answer(url, person_at_provider("ada@acme.example"))).query)["code"][0]
    token = oidc.exchange_code(
        discovery,
        client_id="another-app",
        client_secret="any",
        redirect_uri="http://127.0.0.1:9/cb",
        code=code,
        code_verifier=verifier,
    )
    return token, oidc.provider_keys(discovery)


def test_the_id_token_is_checked_for_audience_issuer_nonce_expiry_and_signature(real_id_token, oidc_provider):
    token, keys = real_id_token
    now = clock.utcnow()
    fits = dict(keys=keys, issuer=oidc_provider.issuer, client_id="another-app", nonce="the-nonce", now=now)
    assert oidc.check_id_token(token, **fits)["email"] == "ada@acme.example"

    def reason(**changes):
        with pytest.raises(SignInRefused) as refused:
            oidc.check_id_token(token, **{**fits, **changes})
        return refused.value.reason

    assert reason(client_id=CLIENT_ID) == "wrong_audience"
    assert reason(issuer="https://login.example.org") == "wrong_issuer"
    assert reason(nonce="another-nonce") == "nonce_mismatch"
    # The provider issues tokens for an hour (devtools/oidc_provider.py); a minute of skew is allowed.
    assert reason(now=now + timedelta(hours=1, minutes=2)) == "token_expired"
    other_keys = {"keys": [{**keys["keys"][0], "n": keys["keys"][0]["n"][::-1]}]}
    assert reason(keys=other_keys) == "bad_signature"
    head, body, signature = token.split(".")
    with pytest.raises(SignInRefused) as refused:
        oidc.check_id_token(f"{head}.{body}.{signature[::-1]}", **fits)
    assert refused.value.reason == "bad_signature"


def test_a_client_id_changed_mid_sign_in_is_a_page_and_signs_nobody_in(
    client, provider_sign_in, set_up_provider, person_at_provider, make_user
):
    set_up_provider()
    make_user("employee", company="Acme Ltd", email="ada@acme.example")
    authorization_url = provider_sign_in.to_provider("ada@acme.example")
    set_up_provider(client_id="another-client-id")  # the admin saves new settings meanwhile

    answer = provider_sign_in.back_from_provider(authorization_url, person_at_provider("ada@acme.example"))

    assert answer.status_code == 502 and "client ID or secret" in words(answer)
    assert signed_in_as(client) is None


def test_without_an_account_a_colleague_needs_an_invitation_unless_the_company_lets_them_join(
    client, provider_sign_in, set_up_provider, person_at_provider, db, auth
):
    company = set_up_provider()
    subject = person_at_provider("new@acme.example", name="Newt Comer")
    refused = provider_sign_in.sign_in("new@acme.example", subject)
    assert refused.status_code == 400 and "Ask a manager of your company for an invitation" in words(refused)
    assert signed_in_as(client) is None

    set_up_provider(join="mentorship")
    joined = provider_sign_in.sign_in("new@acme.example", subject)
    assert joined.status_code == 302
    with db.read() as conn:
        account = conn.execute(
            sa.text("SELECT name, role, programme, company_id FROM users WHERE email = 'new@acme.example'")
        ).one()
    assert tuple(account) == ("Newt Comer", "employee", "mentorship", company)
    assert events(db, company)[-1] == ("sso_joined", None)
    auth.logout()
    assert auth.login("new@acme.example", "").status_code == 401, "an account made by the provider has no password"


@pytest.mark.parametrize(
    ("situation", "said"),
    [
        ("deactivated", "Your account in the portal is deactivated"),
        ("other_company", "belongs to an account of another company"),
        ("domain_not_vouched", "does not vouch for addresses at this domain"),
        ("email_unverified", "not verified"),
    ],
)
def test_an_identity_the_portal_cannot_take_is_refused_with_the_reason(
    client, provider_sign_in, set_up_provider, person_at_provider, make_user, user_id, db, situation, said
):
    company = set_up_provider(domains="acme.example\nacme-labs.example")
    claims = {}
    if situation == "deactivated":
        make_user("employee", company="Acme Ltd", email="ada@acme.example")
        with db.write() as conn:
            conn.execute(
                sa.text("UPDATE users SET deactivated_at = :now WHERE email = 'ada@acme.example'"),
                {"now": clock.now_iso()},
            )
    elif situation == "other_company":
        make_user("employee", company="Other Co", email="ada@acme.example")
    elif situation == "domain_not_vouched":
        make_user("employee", company="Acme Ltd", email="ada@acme.example")
    elif situation == "email_unverified":
        claims["email_verified"] = False
    at_provider = "ada@elsewhere.example" if situation == "domain_not_vouched" else "ada@acme.example"

    answer = provider_sign_in.sign_in("ada@acme.example", person_at_provider(at_provider, **claims))

    assert answer.status_code == 400 and said in words(answer)
    assert signed_in_as(client) is None
    assert events(db, company)[-1] == ("sso_refused", situation)


def test_password_sign_in_switched_off_refuses_the_right_password(client, auth, set_up_provider, make_user):
    email = make_user("employee", company="Acme Ltd", email="ada@acme.example")
    set_up_provider(password_sign_in=True)
    assert auth.login(email).status_code == 302
    auth.logout()

    set_up_provider(password_sign_in=False)
    refused = auth.login(email)
    assert refused.status_code == 401
    assert "signs in through its own identity provider" in words(refused)
    assert signed_in_as(client) is None


def test_the_client_secret_is_stored_sealed(ctx, set_up_provider):
    company = set_up_provider()
    with ctx.db.read() as conn:
        stored = conn.execute(
            sa.text("SELECT client_secret_sealed FROM company_identity_providers WHERE company_id = :id"),
            {"id": company},
        ).scalar_one()
    assert CLIENT_SECRET not in stored
    assert unseal(ctx.settings.secret_key, stored) == CLIENT_SECRET
