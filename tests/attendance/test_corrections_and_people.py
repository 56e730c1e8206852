"""Corrections, volunteers who create their account later, and colleagues who change company."""

import pytest
import sqlalchemy as sa

from portal.attendance.operations import MembershipError, move_user
from portal.attendance.queries import company_attendance, unmatched_sessions
from portal.auth.queries import load_user
from portal.invitations.addresses import parse_addresses
from portal.invitations.operations import accept_invitation, invite_colleagues
from portal.invitations.tokens import token_for, token_hash
from tests.attendance.conftest import session

HEIDI = "heidi@acme.example"


@pytest.fixture
def acme(make_user, company_id):
    make_user("employee", company="Acme Ltd", email=HEIDI)
    return company_id("Acme Ltd")


def test_a_later_version_replaces_the_session_and_an_older_one_is_stale(post_attendance, db, acme):
    post_attendance([session(minutes=60, updated_at="2026-11-03T18:05:00Z")])
    later = post_attendance([session(minutes=90, updated_at="2026-11-04T08:00:00+01:00")])
    assert later.get_json() == {"received": 1, "applied": 1, "unmatched": 0, "stale": 0}
    assert company_attendance(db, company_id=acme).minutes == 90

    older = post_attendance([session(minutes=30, updated_at="2026-11-03T20:00:00Z")])
    assert older.get_json() == {"received": 1, "applied": 0, "unmatched": 0, "stale": 1}
    same_again = post_attendance([session(minutes=90, updated_at="2026-11-04T07:00:00Z")])
    assert same_again.get_json()["stale"] == 1
    assert company_attendance(db, company_id=acme).minutes == 90


def test_within_one_request_the_latest_version_wins(post_attendance, db, acme):
    response = post_attendance(
        [session(minutes=45, updated_at="2026-11-04T10:00:00Z"), session(minutes=15, updated_at="2026-11-04T09:00:00Z")]
    )
    assert response.get_json() == {"received": 2, "applied": 1, "unmatched": 0, "stale": 1}
    assert company_attendance(db, company_id=acme).minutes == 45


def test_two_versions_with_one_updated_at_end_the_same_in_either_order(post_attendance, db, acme):
    """A platform stamping seconds may send a cancellation in the second it recorded attendance."""
    attended = session(minutes=60, updated_at="2026-11-04T09:00:00Z")
    cancelled = session(minutes=60, status="cancelled", updated_at="2026-11-04T09:00:00Z")
    post_attendance([attended, cancelled])
    assert company_attendance(db, company_id=acme).minutes == 0
    post_attendance([attended])  # the attended copy again, later: still the same version, stale
    assert company_attendance(db, company_id=acme).minutes == 0
    with db.write() as conn:
        conn.execute(sa.text("DELETE FROM attendance_sessions"))
    post_attendance([cancelled, attended])
    assert company_attendance(db, company_id=acme).minutes == 0


@pytest.mark.parametrize("status", ["cancelled", "no_show"])
def test_a_cancellation_or_no_show_takes_the_minutes_out(post_attendance, db, acme, status):
    post_attendance([session(1), session(2)])
    assert company_attendance(db, company_id=acme).minutes == 120
    post_attendance([session(2, status=status, updated_at="2026-11-05T09:00:00Z")])
    figures = company_attendance(db, company_id=acme)
    assert (figures.sessions, figures.minutes) == (1, 60)
    # And a later correction can bring it back.
    post_attendance([session(2, status="attended", updated_at="2026-11-06T09:00:00Z")])
    assert company_attendance(db, company_id=acme).minutes == 120


def test_the_same_session_id_is_separate_per_platform_and_per_volunteer(post_attendance, db, acme, make_user):
    make_user("employee", company="Acme Ltd", email="olav@acme.example")
    post_attendance([session(1), session(1, volunteer_email="olav@acme.example")])
    post_attendance([session(1)], platform="mentorship")
    assert company_attendance(db, company_id=acme).sessions == 3


def _accept(ctx, db, manager, address):
    invite_colleagues(
        ctx,
        manager=manager,
        addresses=parse_addresses(address).valid,
        programme="language",
    )
    with db.read() as conn:
        nonce = conn.execute(
            sa.text("SELECT token_nonce FROM invitations WHERE email = :e"), {"e": address.lower()}
        ).scalar_one()
    token = token_for(ctx.settings.secret_key, nonce)
    return accept_invitation(db, token_hash=token_hash(token), name="New Colleague", password="a-long-password")


def test_an_unmatched_volunteer_counts_once_they_accept_their_invitation(
    ctx, post_attendance, db, make_user, user_id, company_id
):
    manager = load_user(db, user_id(make_user("manager", company="Acme Ltd")))
    acme = company_id("Acme Ltd")
    # The platform knows her with capitals; she is invited in lower case.
    response = post_attendance(
        [session(1, volunteer_email="Sofia.Lind@Acme.example"), session(2, volunteer_email="SOFIA.LIND@acme.example")]
    )
    assert response.get_json()["unmatched"] == 2
    assert company_attendance(db, company_id=acme).minutes == 0

    _accept(ctx, db, manager, "sofia.lind@acme.example")
    assert unmatched_sessions(db) == 0
    assert company_attendance(db, company_id=acme).minutes == 120
    # Her later sessions are matched on arrival.
    later = post_attendance([session(3, volunteer_email="sofia.lind@ACME.example")])
    assert later.get_json()["unmatched"] == 0
    assert company_attendance(db, company_id=acme).minutes == 180


def test_users_create_attaches_waiting_sessions_too(post_attendance, runner, db, company_id):
    post_attendance([session(volunteer_email="Boss@Globex.example")])
    result = runner.invoke(
        args=[
            "users",
            "create",
            "--email",
            "boss@globex.example",
            "--role",
            "manager",
            "--company",
            "Globex",
            "--password",
            "correct-horse-battery",
        ]
    )
    assert result.exit_code == 0, result.output
    assert company_attendance(db, company_id=company_id("Globex")).minutes == 60


def test_past_hours_stay_with_the_company_a_colleague_left(post_attendance, db, acme, make_user, company_id, user_id):
    make_user("manager", company="Globex")
    globex = company_id("Globex")
    # Heidi has been with Acme since 2025 (her account is older than this test).
    with db.write() as conn:
        conn.execute(
            sa.text("UPDATE company_memberships SET started_at = '2025-01-01T00:00:00.000000Z' WHERE user_id = :u"),
            {"u": user_id(HEIDI)},
        )
    post_attendance([session(1, held_at="2026-10-01T17:00:00Z"), session(2, held_at="2026-11-20T17:00:00Z")])
    assert company_attendance(db, company_id=acme).minutes == 120

    # Heidi moved to Globex on 1 November; the November session was stored before anyone recorded it.
    move_user(db, user_id=user_id(HEIDI), company_id=globex, at="2026-11-01T00:00:00.000000Z")
    assert company_attendance(db, company_id=acme).minutes == 60
    assert company_attendance(db, company_id=globex).minutes == 60
    # A correction to her October session, arriving after the move, stays with Acme.
    post_attendance([session(1, held_at="2026-10-01T17:00:00Z", minutes=75, updated_at="2026-12-01T09:00:00Z")])
    post_attendance([session(3, held_at="2026-11-27T17:00:00Z")])
    assert company_attendance(db, company_id=acme).minutes == 75
    assert company_attendance(db, company_id=globex).minutes == 120
    with db.read() as conn:
        history = conn.execute(
            sa.text("SELECT company_id, ended_at FROM company_memberships WHERE user_id = :u ORDER BY started_at"),
            {"u": user_id(HEIDI)},
        ).all()
    assert history == [(acme, "2026-11-01T00:00:00.000000Z"), (globex, None)]
    with pytest.raises(MembershipError):
        move_user(db, user_id=user_id(HEIDI), company_id=acme, at="2026-10-15T00:00:00.000000Z")


def test_sessions_held_before_the_account_existed_belong_to_its_first_company(
    post_attendance, db, make_user, company_id
):
    post_attendance([session(held_at="2020-01-15T10:00:00Z", volunteer_email="early@acme.example")])
    make_user("employee", company="Acme Ltd", email="early@acme.example")
    assert company_attendance(db, company_id=company_id("Acme Ltd")).minutes == 60


def test_every_new_account_with_a_company_has_one_current_membership(make_user, db, count):
    make_user("manager", company="Acme Ltd")
    make_user("employee", company="Acme Ltd")
    make_user("admin")
    assert count("company_memberships", "ended_at IS NULL") == 2
