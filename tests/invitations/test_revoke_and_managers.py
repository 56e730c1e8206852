import sqlalchemy as sa

from portal.invitations import operations
from portal.invitations.queries import find_open_invitation
from portal.invitations.tokens import token_for, token_hash
from tests.pages import csrf_from


def link_of(db, ctx, email):
    with db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations WHERE email = :e"), {"e": email}).scalar_one()
    return token_for(ctx.settings.secret_key, nonce)


def invitation_id(db, email):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT id FROM invitations WHERE email = :e"), {"e": email}).scalar_one()


def test_a_revoked_invitation_link_no_longer_opens(client, auth, manager, invite, db, ctx, count):
    invite(["ada@example.org"])
    token = link_of(db, ctx, "ada@example.org")
    auth.login(manager.email)
    path = f"/invitations/{invitation_id(db, 'ada@example.org')}/revoke"
    asked = client.get(path).get_data(as_text=True)
    assert "Revoke the invitation to ada@example.org?" in asked and "Revoking is final for this link." in asked
    csrf = csrf_from(asked)
    response = client.post(path, data={"csrf_token": csrf, "confirmed": "yes"})
    assert response.status_code == 302
    listed = client.get("/invitations").get_data(as_text=True)
    assert "is revoked" in listed and "revoked" in listed
    auth.logout()
    page = client.get(f"/invitations/accept/{token}")
    assert page.status_code == 410 and "withdrawn" in page.get_data(as_text=True)
    csrf = csrf_from(client.get("/login").get_data(as_text=True))
    client.post(f"/invitations/accept/{token}", data={"name": "Ada", "password": "a-long-password", "csrf_token": csrf})
    assert count("users", "email = 'ada@example.org'") == 0


def test_the_list_asks_first_and_a_script_keeps_its_contract(client, auth, manager, invite, db, ctx):
    """The list's Revoke opens the confirmation page, and a post that answers it with anything but
    yes changes nothing. A script's POST without the field revokes, as CONTRACT.md promises."""
    invite(["ada@example.org", "bo@example.org"])
    token = link_of(db, ctx, "ada@example.org")
    auth.login(manager.email)
    path = f"/invitations/{invitation_id(db, 'ada@example.org')}/revoke"
    listed = client.get("/invitations").get_data(as_text=True)
    assert f'href="{path}"' in listed, "the list's Revoke opens the confirmation page"
    asked = client.get(path).get_data(as_text=True)
    assert "Revoke the invitation to ada@example.org?" in asked
    csrf = csrf_from(listed)
    answer = client.post(path, data={"csrf_token": csrf, "confirmed": "ask"})
    assert answer.status_code == 200 and "Revoke the invitation to ada@example.org?" in answer.get_data(as_text=True)
    assert find_open_invitation(db, token_hash(token))[0] is not None, "the link still opens"
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM invitations WHERE revoked_at IS NOT NULL")).scalar() == 0

    scripted = f"/invitations/{invitation_id(db, 'bo@example.org')}/revoke"
    assert client.post(scripted, data={"csrf_token": csrf}).status_code == 302
    with db.read() as conn:
        revoked = conn.execute(sa.text("SELECT email FROM invitations WHERE revoked_at IS NOT NULL")).scalars().all()
    assert revoked == ["bo@example.org"]


def test_another_companys_invitation_has_no_revoke_page(client, auth, invite, db, make_user):
    invite(["ada@example.org"])
    auth.login(make_user("manager", company="Other Ltd"))
    assert client.get(f"/invitations/{invitation_id(db, 'ada@example.org')}/revoke").status_code == 404


def test_revoking_refuses_another_companys_and_accepted_invitations(db, ctx, manager, invite, make_user, user_id):
    from portal.auth.queries import load_user

    invite(["ada@example.org"])
    other = load_user(db, user_id(make_user("manager", company="Other Co")))
    try:
        operations.revoke_invitation(
            db, company_id=other.company_id, invitation_id=invitation_id(db, "ada@example.org")
        )
    except operations.InvitationError as error:
        assert "does not exist" in str(error)
    else:
        raise AssertionError("another company revoked the invitation")
    operations.accept_invitation(
        db, token_hash=token_hash(link_of(db, ctx, "ada@example.org")), name="Ada", password="a-long-password"
    )
    try:
        operations.revoke_invitation(
            db, company_id=manager.company_id, invitation_id=invitation_id(db, "ada@example.org")
        )
    except operations.InvitationError as error:
        assert "already accepted" in str(error)
    else:
        raise AssertionError("an accepted invitation was revoked")


def test_inviting_a_revoked_address_again_opens_a_new_link(db, ctx, manager, invite):
    invite(["ada@example.org"])
    old = link_of(db, ctx, "ada@example.org")
    operations.revoke_invitation(db, company_id=manager.company_id, invitation_id=invitation_id(db, "ada@example.org"))
    result = invite(["ada@example.org"])
    assert result.invited == ("ada@example.org",)
    new = link_of(db, ctx, "ada@example.org")
    assert (
        find_open_invitation(db, token_hash(old)) == (None, "unknown")
        and find_open_invitation(db, token_hash(new))[0] is not None
    )


def test_invitations_are_filtered_and_say_how_many_they_show(client, auth, manager, invite):
    invite([f"p{n:03d}@example.org" for n in range(120)])
    auth.login(manager.email)
    page = client.get("/invitations").get_data(as_text=True)
    assert "Showing 1–50 of 120" in page and "p119@example.org" in page and "p000@example.org" not in page
    last = client.get("/invitations?page=3").get_data(as_text=True)
    assert "Showing 101–120 of 120" in last and "p000@example.org" in last
    found = client.get("/invitations?q=p00&state=open").get_data(as_text=True)
    assert "Showing all 10" in found
    assert "No invitation matches." in client.get("/invitations?state=accepted").get_data(as_text=True)
