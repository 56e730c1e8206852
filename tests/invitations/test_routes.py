import json
import re

import sqlalchemy as sa

from portal.invitations.emails import INVITATION
from portal.invitations.tokens import token_for
from portal.outbox.ground.rendering import render_bodies
from tests.pages import decoded_session


def post_invite(client, auth, emails, programme="language"):
    token = auth.csrf_token("/invitations/new")
    return client.post("/invitations/new", data={"emails": emails, "programme": programme, "csrf_token": token})


def test_one_invalid_address_writes_nothing_and_is_named(client, auth, manager, count):
    auth.login(manager.email)
    response = post_invite(client, auth, "ada@example.org, bob@, carol@example.org")
    page = response.get_data(as_text=True)
    assert response.status_code == 400
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
    assert response.status_code == 400
    assert "at most 500" in response.get_data(as_text=True) and count("invitations") == 0


def test_employees_and_admins_cannot_invite(client, auth, make_user):
    auth.login(make_user("employee"))
    assert client.get("/invitations/new").status_code == 403


def _invite_and_sign_out(client, auth, manager, db, ctx, address="ada@example.org"):
    auth.login(manager.email)
    post_invite(client, auth, address, programme="mentorship")
    auth.logout()
    with db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations WHERE email = :e"), {"e": address}).scalar()
    return token_for(ctx.settings.secret_key, nonce)


def test_accept_page_creates_the_account_and_signs_in(client, auth, manager, db, ctx):
    token = _invite_and_sign_out(client, auth, manager, db, ctx)
    opened = client.get(f"/invitations/accept/{token}")
    # The token is exchanged for session state: the page the person fills in has a clean URL.
    assert opened.status_code == 303 and opened.headers["Location"] == "/invitations/accept"
    page = client.get("/invitations/accept").get_data(as_text=True)
    assert "Join Acme Ltd at TEEI" in page and "TEEI Mentorship" in page and token not in page
    # Nor is it in the session cookie, which is signed but readable by whoever holds it.
    assert token not in decoded_session(client.get_cookie("session").value)
    csrf = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    refused = client.post("/invitations/accept", data={"name": "Ada Lovelace", "password": "short", "csrf_token": csrf})
    assert refused.status_code == 400, "a refused form answers 400, with what was typed"
    assert 'value="Ada Lovelace"' in refused.get_data(as_text=True)
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM users WHERE name = 'Ada Lovelace'")).scalar() == 0
    response = client.post(
        "/invitations/accept", data={"name": "Ada Lovelace", "password": "a-long-password", "csrf_token": csrf}
    )
    assert response.status_code == 302
    assert "My volunteering" in client.get("/", follow_redirects=True).get_data(as_text=True)
    used = client.get(f"/invitations/accept/{token}")
    assert used.status_code == 410 and "has been used" in used.get_data(as_text=True)


def test_the_clean_accept_url_without_a_link_opened_first_explains_itself(client):
    response = client.get("/invitations/accept")
    assert response.status_code == 404 and "recognise this link" in response.get_data(as_text=True)


def test_posting_with_the_token_in_the_path_still_works(client, auth, manager, db, ctx):
    token = _invite_and_sign_out(client, auth, manager, db, ctx)
    csrf = auth.csrf_token("/login")
    response = client.post(
        f"/invitations/accept/{token}", data={"name": "Ada Lovelace", "password": "a-long-password", "csrf_token": csrf}
    )
    assert response.status_code == 302 and response.headers["Location"] == "/"


def test_inviting_an_address_with_an_account_elsewhere_answers_as_for_a_new_address(
    client, auth, manager, make_user, db, ctx, count
):
    elsewhere = make_user("employee", company="Globex", email="bob@globex.example")
    auth.login(manager.email)

    def answer(address):
        response = post_invite(client, auth, address)
        page = client.get(response.headers["Location"]).get_data(as_text=True)
        return re.search(r'<p class="flash[^"]*">(.*?)</p>', page, re.S).group(1).strip()

    assert answer(elsewhere) == answer("nobody-yet@example.org")
    assert count("invitations") == 2
    # The address's owner, and only they, learn why the link cannot make a second account.
    auth.logout()
    with db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations WHERE email = :e"), {"e": elsewhere}).scalar()
    opened = client.get(f"/invitations/accept/{token_for(ctx.settings.secret_key, nonce)}")
    assert opened.status_code == 410 and "already have an account" in opened.get_data(as_text=True)


def test_a_colleague_already_in_the_company_is_still_named(client, auth, manager, make_user):
    colleague = make_user("employee", company="Acme Ltd", email="carol@acme.example")
    auth.login(manager.email)
    response = post_invite(client, auth, colleague)
    assert "Already have an account: carol@acme.example" in client.get(response.headers["Location"]).get_data(
        as_text=True
    )


def test_unknown_token_gets_a_clear_page(client):
    response = client.get("/invitations/accept/not-a-real-token")
    assert response.status_code == 404 and "recognise this link" in response.get_data(as_text=True)


def test_a_pasted_name_is_listed_greeted_and_offered_on_accept(client, auth, manager, db, ctx):
    auth.login(manager.email)
    post_invite(client, auth, "Ada Lovelace <ada@example.org>, bob@example.org")
    assert "Ada Lovelace" in client.get("/invitations").get_data(as_text=True)
    with db.read() as conn:
        inputs = conn.execute(
            sa.text(
                "SELECT o.recipient, COALESCE(json_patch(s.data, o.template_input), o.template_input) "
                "FROM email_outbox o LEFT JOIN email_shared_inputs s ON s.id = o.shared_input_id"
            )
        ).all()
    texts = {
        recipient: render_bodies("invitation", INVITATION.prepare(json.loads(data), ctx.settings))[1]
        for recipient, data in inputs
    }
    assert texts["ada@example.org"].count("Hello Ada Lovelace,") == 1
    assert "Hello" not in texts["bob@example.org"]
    auth.logout()
    with db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations WHERE email = 'ada@example.org'")).scalar()
    client.get(f"/invitations/accept/{token_for(ctx.settings.secret_key, nonce)}")
    page = client.get("/invitations/accept").get_data(as_text=True)
    assert re.search(r'name="name"[^>]*value="Ada Lovelace"', page)


def test_the_list_is_searched_by_pasted_name_as_well_as_address(client, auth, manager):
    auth.login(manager.email)
    post_invite(client, auth, "Ada Lovelace <ada@example.org>, bob@example.org")
    page = client.get("/invitations?q=lovelace").get_data(as_text=True)
    assert "ada@example.org" in page and "bob@example.org" not in page
    page = client.get("/invitations?q=bob").get_data(as_text=True)
    assert "bob@example.org" in page and "ada@example.org" not in page


def _greetings(db, ctx):
    with db.read() as conn:
        inputs = conn.execute(
            sa.text(
                "SELECT o.recipient, COALESCE(json_patch(s.data, o.template_input), o.template_input) "
                "FROM email_outbox o LEFT JOIN email_shared_inputs s ON s.id = o.shared_input_id"
            )
        ).all()
    return {
        recipient: render_bodies("invitation", INVITATION.prepare(json.loads(data), ctx.settings))[1]
        for recipient, data in inputs
    }


def test_a_pasted_name_that_hides_or_reorders_text_is_refused_and_greets_nobody(client, auth, manager, db, ctx, count):
    """A name pasted with an address greets the invitee ("Hello …,"): a zero-width space or a
    right-to-left override in it would greet them with other words than the manager sees."""
    auth.login(manager.email)
    for pasted in ("Ada\u200b Lovelace <ada@example.org>", "\u202eecalevoL adA <ada@example.org>"):
        response = post_invite(client, auth, pasted)
        assert response.status_code == 400 and "Remove the invisible characters" in response.get_data(as_text=True)
    assert count("invitations") == 0 and _greetings(db, ctx) == {}


def test_a_persian_name_keeps_its_joiner(client, auth, manager, db, ctx):
    auth.login(manager.email)
    name = (
        "\u0645\u0647\u200c\u0646\u0627\u0632 \u0627\u062d\u0645\u062f\u06cc"  # a zero-width non-joiner between letters
    )
    assert post_invite(client, auth, f"{name} <mahnaz@example.org>").status_code == 302
    assert f"Hello {name}," in _greetings(db, ctx)["mahnaz@example.org"]


def test_the_name_typed_on_accepting_is_refused_with_hidden_characters(client, auth, manager, db, ctx, count):
    token = _invite_and_sign_out(client, auth, manager, db, ctx)
    client.get(f"/invitations/accept/{token}")
    csrf = auth.csrf_token("/invitations/accept")
    response = client.post(
        "/invitations/accept", data={"name": "Ada\u2060 Lovelace", "password": "a-long-password", "csrf_token": csrf}
    )
    assert "Remove the invisible characters" in response.get_data(as_text=True)
    assert count("invitations", "accepted_at IS NOT NULL") == 0
