import sqlalchemy as sa
import pytest

from portal.invitations import service
from portal.outbox.families import get_family
from portal.tokens import token_for


def invite(services, manager, addresses, programme="language"):
    return service.invite_colleagues(services.db, services.redis, services.settings, manager=manager,
                                     addresses=addresses, programme=programme)


def test_parse_addresses_trims_lowercases_dedupes_and_reports_each_invalid_one():
    parsed = service.parse_addresses(' Ada@Example.org, bob@example.org\n"ada@example.org"\r\n\tnot-an-email;x@\n\n')
    assert parsed.valid == ["ada@example.org", "bob@example.org"]
    assert [typed for typed, _ in parsed.invalid] == ["not-an-email", "x@"]


def test_spreadsheet_column_is_accepted():
    column = "Email\nada@example.org\nbob@example.org\n"
    parsed = service.parse_addresses(column.replace("Email\n", ""))
    assert parsed.valid == ["ada@example.org", "bob@example.org"] and parsed.invalid == []


def test_invite_writes_invitations_and_intents_together(services, manager, count):
    result = invite(services, manager, ["ada@example.org", "bob@example.org"])
    assert result.invited == ("ada@example.org", "bob@example.org") and result.queued
    assert count("invitations") == 2
    assert count("email_outbox", "family = 'invitation' AND status = 'enqueued'") == 2


def test_a_replayed_invite_sends_nothing_new(services, manager, count):
    invite(services, manager, ["ada@example.org"])
    again = invite(services, manager, ["ada@example.org"])
    assert again.invited == () and again.already_invited == ("ada@example.org",)
    assert count("invitations") == 1 and count("email_outbox") == 1


def test_existing_account_is_not_invited(services, manager, count, make_user):
    make_user("employee", company="Acme Ltd", email="member@example.org")
    result = invite(services, manager, ["member@example.org"])
    assert result.already_members == ("member@example.org",) and count("email_outbox") == 0


def test_the_token_is_never_stored_and_the_email_carries_a_working_link(services, manager, db):
    invite(services, manager, ["ada@example.org"])
    with db.read() as conn:
        invitation = conn.execute(sa.text("SELECT * FROM invitations")).mappings().one()
        row = conn.execute(sa.text("SELECT template_input FROM email_outbox")).scalar()
    token = token_for(services.settings.secret_key, invitation["token_nonce"])
    assert len(token) >= 43  # 256 bits, base64url
    dump = str(dict(invitation)) + row
    assert token not in dump
    import json
    rendered = get_family("invitation").render(json.loads(row), services.settings)
    assert f"/invitations/accept/{token}" in rendered.html and f"/invitations/accept/{token}" in rendered.text
    assert "nothing to log" in rendered.text and "Acme Ltd" in rendered.subject
    found, problem = service.find_open_invitation(db, token)
    assert problem is None and found.email == "ada@example.org"


def accept_token(services, db):
    with db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations")).scalar()
    return token_for(services.settings.secret_key, nonce)


def test_accepting_creates_the_employee_once(services, manager, db, count):
    invite(services, manager, ["ada@example.org"], programme="mentorship")
    token = accept_token(services, db)
    user_id = service.accept_invitation(db, token=token, name="Ada", password="a-long-password")
    with db.read() as conn:
        user = conn.execute(sa.text("SELECT * FROM users WHERE id = :id"), {"id": user_id}).mappings().one()
    assert (user["role"], user["company_id"], user["programme"]) == ("employee", manager.company_id, "mentorship")
    with pytest.raises(service.InvitationError):
        service.accept_invitation(db, token=token, name="Ada again", password="a-long-password")
    assert service.find_open_invitation(db, token) == (None, "used")
    assert count("users", "role = 'employee'") == 1


def test_an_expired_token_is_refused_and_reinviting_renews_it(services, manager, db, count):
    invite(services, manager, ["ada@example.org"])
    token = accept_token(services, db)
    with db.write() as conn:
        conn.execute(sa.text("UPDATE invitations SET expires_at = '2020-01-01T00:00:00.000000Z'"))
    assert service.find_open_invitation(db, token) == (None, "expired")
    with pytest.raises(service.InvitationError):
        service.accept_invitation(db, token=token, name="Ada", password="a-long-password")
    again = invite(services, manager, ["ada@example.org"])
    assert again.invited == ("ada@example.org",)
    assert count("invitations") == 1 and count("email_outbox") == 2
    assert service.find_open_invitation(db, token) == (None, "unknown"), "the old link is replaced"


def test_resend_only_after_the_first_email_settled(services, manager, db, count):
    invite(services, manager, ["ada@example.org"])
    (invitation,) = service.list_invitations(db, company_id=manager.company_id)
    assert invitation.email_state == "queued" and not invitation.can_resend
    with pytest.raises(service.InvitationError, match="still being sent"):
        service.resend_invitation(db, services.redis, services.settings, manager=manager, invitation_id=invitation.id)
    with db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET status = 'bounced'"))
    assert service.list_invitations(db, company_id=manager.company_id)[0].can_resend
    service.resend_invitation(db, services.redis, services.settings, manager=manager, invitation_id=invitation.id)
    with db.read() as conn:
        keys = conn.execute(sa.text("SELECT idempotency_key FROM email_outbox ORDER BY created_at")).scalars().all()
    assert keys == [f"invitation:{invitation.id}:send:1", f"invitation:{invitation.id}:send:2"]
    assert service.list_invitations(db, company_id=manager.company_id)[0].email_state == "queued"


def test_another_companys_manager_cannot_resend(services, manager, db, make_user):
    from portal.auth.service import load_user

    invite(services, manager, ["ada@example.org"])
    (invitation,) = service.list_invitations(db, company_id=manager.company_id)
    other_email = make_user("manager", company="Other Co")
    with db.read() as conn:
        other = load_user(db, conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": other_email}).scalar())
    with pytest.raises(service.InvitationError, match="does not exist"):
        service.resend_invitation(db, services.redis, services.settings, manager=other, invitation_id=invitation.id)
    assert service.list_invitations(db, company_id=other.company_id) == []


@pytest.mark.parametrize("status, words", [("pending", "queued"), ("sent", "sent"), ("delivered", "delivered"),
                                           ("bounced", "bounced"), ("suppressed", "blocked: the address bounced before"),
                                           ("failed", "failed"), ("dead_letter", "needs attention")])
def test_email_state_in_a_managers_words(services, manager, db, status, words):
    invite(services, manager, ["ada@example.org"])
    with db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET status = :s"), {"s": status})
    assert service.list_invitations(db, company_id=manager.company_id)[0].email_state == words


def test_a_resend_states_the_invitations_real_expiry(services, manager, db):
    import json

    invite(services, manager, ["ada@example.org"])
    (invitation,) = service.list_invitations(db, company_id=manager.company_id)
    with db.write() as conn:
        conn.execute(sa.text("UPDATE invitations SET expires_at = '2099-03-04T00:00:00.000000Z'"))
        conn.execute(sa.text("UPDATE email_outbox SET status = 'delivered'"))
    service.resend_invitation(db, services.redis, services.settings, manager=manager, invitation_id=invitation.id)
    with db.read() as conn:
        data = json.loads(conn.execute(sa.text(
            "SELECT template_input FROM email_outbox ORDER BY created_at DESC, rowid DESC LIMIT 1")).scalar())
    assert data["expires_on"] == "04 March 2099"
