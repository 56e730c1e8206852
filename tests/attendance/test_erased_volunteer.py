"""A programme platform's record for a volunteer erased since (issue 46): it is written under the
pseudonym, with its session ID keyed as the erasure keyed hers, so a correction reaches the counted
session and neither the address nor the name in the session ID is stored again."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from portal.attendance.queries import company_attendance
from portal.core import clock
from portal.core.pseudonyms import session_key
from portal.privacy.operations import erase_person
from portal.privacy.queries import personal_data
from tests.attendance.conftest import session

HEIDI = "heidi@acme.example"


@pytest.fixture
def erased_heidi(ctx, make_user, user_id, post_attendance, company_id):
    """Heidi's two sessions counted for Acme, then Heidi erased; returns her pseudonym."""
    make_user("employee", company="Acme Ltd", email=HEIDI)
    first = [
        session(1, session_id="lang-heidi-1"),
        session(2, session_id="lang-heidi-2", held_at="2026-11-10T17:00:00Z"),
    ]
    assert post_attendance(first).json == {"received": 2, "applied": 2, "unmatched": 0, "stale": 0}
    erasure = erase_person(
        ctx, address=HEIDI, actor_user_id=user_id(make_user("admin")), now=clock.utcnow(), holds_data=True
    )
    assert company_attendance(ctx.db, company_id=company_id("Acme Ltd")).minutes == 120
    return erasure.pseudonym


def sessions(ctx) -> list[tuple]:
    with ctx.db.read() as conn:
        return [
            tuple(row)
            for row in conn.execute(
                sa.text("SELECT session_id, volunteer_email, minutes, status FROM attendance_sessions ORDER BY held_at")
            )
        ]


def test_an_erasure_keys_the_session_ids_that_carry_a_name(ctx, erased_heidi):
    key = ctx.settings.secret_key
    assert sessions(ctx) == [
        (session_key("lang-heidi-1", key), erased_heidi, 60, "attended"),
        (session_key("lang-heidi-2", key), erased_heidi, 60, "attended"),
    ]
    assert not any("heidi" in session_id for session_id, *_ in sessions(ctx))


def test_a_late_correction_reaches_the_counted_session_and_stores_no_address(
    ctx, erased_heidi, post_attendance, company_id
):
    late = [
        session(
            2, session_id="lang-heidi-2", held_at="2026-11-10T17:00:00Z", minutes=90, updated_at="2026-11-12T09:00:00Z"
        )
    ]
    assert post_attendance(late).json == {"received": 1, "applied": 1, "unmatched": 0, "stale": 0}
    assert company_attendance(ctx.db, company_id=company_id("Acme Ltd")).minutes == 150  # 60 + 90, not 60 + 60 + 90
    assert [row[1:] for row in sessions(ctx)] == [(erased_heidi, 60, "attended"), (erased_heidi, 90, "attended")]
    assert not any("heidi" in str(value) for row in sessions(ctx) for value in row)


def test_a_late_new_session_counts_for_the_former_volunteer_under_the_pseudonym(
    ctx, erased_heidi, post_attendance, company_id
):
    late = [session(3, session_id="lang-heidi-3", held_at="2026-11-17T17:00:00Z")]
    assert post_attendance(late).json == {"received": 1, "applied": 1, "unmatched": 0, "stale": 0}
    assert company_attendance(ctx.db, company_id=company_id("Acme Ltd")).minutes == 180
    assert not any("heidi" in str(value) for row in sessions(ctx) for value in row)
    assert post_attendance(late, webhook_id="msg_again").json["stale"] == 1  # the same record again: stale


def test_a_volunteer_who_came_back_has_her_records_under_her_address_again(
    ctx, erased_heidi, post_attendance, make_user
):
    make_user("employee", company="Acme Ltd", email=HEIDI)  # invited again, accepted: herself again
    assert post_attendance([session(4, session_id="lang-heidi-4")]).json["unmatched"] == 0
    with ctx.db.read() as conn:
        assert conn.execute(
            sa.text("SELECT session_id FROM attendance_sessions WHERE volunteer_email = :a"), {"a": HEIDI}
        ).scalars().all() == ["lang-heidi-4"]


@pytest.mark.parametrize(
    ("updated_at", "minutes"), [("2026-11-12T09:00:00.000000Z", 150), ("2026-11-01T09:00:00.000000Z", 120)]
)
def test_a_record_stored_under_her_address_after_her_erasure_is_found_and_erased_again(
    ctx, erased_heidi, make_user, user_id, company_id, updated_at, minutes
):
    """As an earlier release stored a platform's late correction: under the address (with no account
        to count for), beside the pseudonymised session it corrects. The privacy page finds it; erasing
        again keys it and, newer than the session it corrects, replaces it under the same pseudonym, and
    counts (older, it goes)."""
    with ctx.db.write() as conn:
        conn.execute(
            sa.text(
                """INSERT INTO attendance_sessions (platform, session_id, volunteer_email, held_at, minutes, status,
                                                    updated_at, received_at, source)
                   VALUES ('language', 'lang-heidi-2', :a, '2026-11-10T17:00:00.000000Z', 90, 'attended',
                           :updated_at, '2026-11-12T09:00:01.000000Z', 'api')"""
            ),
            {"a": HEIDI, "updated_at": updated_at},
        )
    assert personal_data(ctx.db, HEIDI).counts()["attendance"] == 1
    again = erase_person(
        ctx, address=HEIDI, actor_user_id=user_id(make_user("admin")), now=clock.utcnow(), holds_data=True
    )
    assert again.done and again.pseudonym == erased_heidi
    assert [row[1] for row in sessions(ctx)] == [erased_heidi, erased_heidi]
    assert company_attendance(ctx.db, company_id=company_id("Acme Ltd")).minutes == minutes
    assert personal_data(ctx.db, HEIDI).total == 0
