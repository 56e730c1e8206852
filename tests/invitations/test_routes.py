import re

import sqlalchemy as sa

from portal.invitations.tokens import token_for


def post_invite(client, auth, emails, programme="language"):
    token = auth.csrf_token("/invitations/new")
    return client.post("/invitations/new", data={"emails": emails, "programme": programme, "csrf_token": token})


def test_one_invalid_address_writes_nothing_and_is_named(client, auth, manager, count):
    auth.login(manager.email)
    response = post_invite(client, auth, "ada@example.org, bob@, carol@example.org")
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "“bob@” is not a valid email address." in page and "Nothing was sent" in page
    assert count("invitations") == 0 and count("email_outbox") == 0


def test_valid_addresses_are_invited_and_listed(client, auth, manager, count):
    auth.login(manager.email)
    response = post_invite(client, auth, "ada@example.org\nbob@example.org")
    assert response.status_code == 302
    page = client.get("/invitations").get_data(as_text=True)
    assert "Invited 2 colleagues" in page and "ada@example.org" in page and "queued" in page
    again = post_invite(client, auth, "ada@example.org")
    assert "Already invited, so nothing new was sent: ada@example.org" in client.get(
        again.headers["Location"]
    ).get_data(as_text=True)
    assert count("email_outbox") == 2


def test_more_than_500_addresses_are_refused(client, auth, manager, count):
    auth.login(manager.email)
    response = post_invite(client, auth, ",".join(f"p{n}@example.org" for n in range(501)))
    assert "at most 500" in response.get_data(as_text=True) and count("invitations") == 0


def test_employees_and_admins_cannot_invite(client, auth, make_user):
    auth.login(make_user("employee"))
    assert client.get("/invitations/new").status_code == 403


def test_accept_page_creates_the_account_and_signs_in(client, auth, manager, db, ctx):
    auth.login(manager.email)
    post_invite(client, auth, "ada@example.org", programme="mentorship")
    auth.logout()
    with db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations")).scalar()
    token = token_for(ctx.settings.secret_key, nonce)
    page = client.get(f"/invitations/accept/{token}").get_data(as_text=True)
    assert "Join Acme Ltd at TEEI" in page and "TEEI Mentorship" in page
    csrf = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    response = client.post(
        f"/invitations/accept/{token}", data={"name": "Ada Lovelace", "password": "a-long-password", "csrf_token": csrf}
    )
    assert response.status_code == 302
    assert "My volunteering" in client.get("/", follow_redirects=True).get_data(as_text=True)
    used = client.get(f"/invitations/accept/{token}")
    assert used.status_code == 410 and "has been used" in used.get_data(as_text=True)


def test_unknown_token_gets_a_clear_page(client):
    response = client.get("/invitations/accept/not-a-real-token")
    assert response.status_code == 404 and "recognise this link" in response.get_data(as_text=True)
