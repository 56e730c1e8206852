import json

import pytest
import sqlalchemy as sa

from portal.auth.queries import load_user
from portal.core import clock
from portal.email_families import FAMILIES
from portal.invitations import operations
from portal.invitations.addresses import parse_addresses
from portal.invitations.display import invitation_view
from portal.invitations.queries import find_open_invitation, list_invitations
from portal.invitations.tokens import token_for, token_hash


def test_parse_addresses_trims_lowercases_dedupes_and_reports_each_invalid_one():
    parsed = parse_addresses(' Ada@Example.org, bob@example.org\n"ada@example.org"\r\n\tnot-an-email;x@\n\n')
    assert parsed.valid == ["ada@example.org", "bob@example.org"]
    assert [typed for typed, _ in parsed.invalid] == ["not-an-email", "x@"]


def test_spreadsheet_column_is_accepted():
    column = "Email\nada@example.org\nbob@example.org\n"
    parsed = parse_addresses(column.replace("Email\n", ""))
    assert parsed.valid == ["ada@example.org", "bob@example.org"] and parsed.invalid == []


def test_invite_writes_invitations_and_intents_together(invite, manager, count):
    result = invite(["ada@example.org", "bob@example.org"])
    assert result.invited == ("ada@example.org", "bob@example.org") and result.queued
    assert count("invitations") == 2
    assert count("email_outbox", "family = 'invitation' AND status = 'enqueued'") == 2


def test_a_replayed_invite_sends_nothing_new(invite, manager, count):
    invite(["ada@example.org"])
    again = invite(["ada@example.org"])
    assert again.invited == () and again.already_invited == ("ada@example.org",)
    assert count("invitations") == 1 and count("email_outbox") == 1


def test_existing_account_is_not_invited(invite, manager, count, make_user):
    make_user("employee", company="Acme Ltd", email="member@example.org")
    result = invite(["member@example.org"])
    assert result.already_members == ("member@example.org",) and count("email_outbox") == 0


def test_the_token_is_never_stored_and_the_email_carries_a_working_link(ctx, invite, manager, db, outbox_rows):
    invite(["ada@example.org"])
    with db.read() as conn:
        invitation = conn.execute(sa.text("SELECT * FROM invitations")).mappings().one()
    (email,) = outbox_rows()
    row = email["template_input"]
    token = token_for(ctx.settings.secret_key, invitation["token_nonce"])
    assert len(token) >= 43  # 256 bits, base64url
    dump = str(dict(invitation)) + row
    assert token not in dump
    rendered = FAMILIES["invitation"].render(json.loads(row), ctx.settings, now=clock.utcnow())
    assert f"/invitations/accept/{token}" in rendered.html and f"/invitations/accept/{token}" in rendered.text
    assert "nothing to log" in rendered.text and "Acme Ltd" in rendered.subject
    found, problem = find_open_invitation(db, token_hash(token))
    assert problem is None and found.email == "ada@example.org"


def listed(db, manager):
    """The manager's invitation list as the page shows it."""
    return [invitation_view(row) for row in list_invitations(db, company_id=manager.company_id)]


def accept_token(ctx, db):
    with db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations")).scalar()
    return token_for(ctx.settings.secret_key, nonce)


def test_accepting_creates_the_employee_once(ctx, invite, manager, db, count):
    invite(["ada@example.org"], programme="mentorship")
    token = accept_token(ctx, db)
    user_id = operations.accept_invitation(db, token_hash=token_hash(token), name="Ada", password="a-long-password")
    with db.read() as conn:
        user = conn.execute(sa.text("SELECT * FROM users WHERE id = :id"), {"id": user_id}).mappings().one()
    assert (user["role"], user["company_id"], user["programme"]) == ("employee", manager.company_id, "mentorship")
    with pytest.raises(operations.InvitationError):
        operations.accept_invitation(db, token_hash=token_hash(token), name="Ada again", password="a-long-password")
    assert find_open_invitation(db, token_hash(token)) == (None, "used")
    assert count("users", "role = 'employee'") == 1


def test_an_expired_token_is_refused_and_reinviting_renews_it(ctx, invite, manager, db, count):
    invite(["ada@example.org"])
    token = accept_token(ctx, db)
    with db.write() as conn:
        conn.execute(sa.text("UPDATE invitations SET expires_at = '2020-01-01T00:00:00.000000Z'"))
    assert find_open_invitation(db, token_hash(token)) == (None, "expired")
    with pytest.raises(operations.InvitationError):
        operations.accept_invitation(db, token_hash=token_hash(token), name="Ada", password="a-long-password")
    again = invite(["ada@example.org"])
    assert again.invited == ("ada@example.org",)
    assert count("invitations") == 1 and count("email_outbox") == 2
    assert find_open_invitation(db, token_hash(token)) == (None, "unknown"), "the old link is replaced"


def test_resend_only_after_the_first_email_settled(ctx, invite, manager, db, outbox_rows):
    invite(["ada@example.org"])
    (invitation,) = listed(db, manager)
    assert invitation.email_state == "queued" and not invitation.can_resend
    with pytest.raises(operations.InvitationError, match="still being sent"):
        operations.resend_invitation(ctx, manager=manager, invitation_id=invitation.id)
    with db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET status = 'bounced'"))
    assert listed(db, manager)[0].can_resend
    operations.resend_invitation(ctx, manager=manager, invitation_id=invitation.id)
    keys = [row["idempotency_key"] for row in outbox_rows()]
    assert keys == [f"invitation:{invitation.id}:send:1", f"invitation:{invitation.id}:send:2"]
    assert listed(db, manager)[0].email_state == "queued"


def test_another_companys_manager_cannot_resend(ctx, invite, manager, db, make_user, user_id):
    invite(["ada@example.org"])
    (invitation,) = listed(db, manager)
    other = load_user(db, user_id(make_user("manager", company="Other Co")))
    with pytest.raises(operations.InvitationError, match="does not exist"):
        operations.resend_invitation(ctx, manager=other, invitation_id=invitation.id)
    assert list_invitations(db, company_id=other.company_id) == []


@pytest.mark.parametrize(
    "status, words",
    [
        ("pending", "queued"),
        ("sent", "sent"),
        ("delivered", "delivered"),
        ("bounced", "bounced"),
        ("suppressed", "blocked: the address bounced before"),
        ("failed", "failed"),
        ("dead_letter", "needs attention"),
    ],
)
def test_email_state_in_a_managers_words(invite, manager, db, status, words):
    invite(["ada@example.org"])
    with db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET status = :s"), {"s": status})
    assert listed(db, manager)[0].email_state == words


def test_a_resend_states_the_invitations_real_expiry(ctx, invite, manager, db, outbox_rows):
    invite(["ada@example.org"])
    (invitation,) = listed(db, manager)
    with db.write() as conn:
        conn.execute(sa.text("UPDATE invitations SET expires_at = '2099-03-04T00:00:00.000000Z'"))
        conn.execute(sa.text("UPDATE email_outbox SET status = 'delivered'"))
    operations.resend_invitation(ctx, manager=manager, invitation_id=invitation.id)
    data = json.loads(outbox_rows()[-1]["template_input"])
    assert data["expires_on"] == "4 Mar 2099"  # the one date format of pages and emails
