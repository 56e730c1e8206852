"""Issue 50, item 4: a session item may say it was held in the volunteer's own time (`volunteer_time`);
a platform that does not say keeps working as before (working time)."""

from __future__ import annotations

import sqlalchemy as sa

from tests.attendance.conftest import session


def test_the_platform_may_say_own_time_and_a_platform_that_does_not_keeps_working(
    db, make_user, post_attendance, count
):
    make_user("employee", company="Acme Ltd", email="heidi@acme.example")
    response = post_attendance([session(1), session(2, volunteer_time="own"), session(3, volunteer_time="company")])
    assert response.status_code == 200 and response.get_json()["applied"] == 3
    with db.read() as conn:
        stored = dict(conn.execute(sa.text("SELECT session_id, own_time FROM attendance_sessions")).all())
    assert stored == {"lang-1": 0, "lang-2": 1, "lang-3": 0}
    refused = post_attendance([session(4), session(5, volunteer_time="weekend")])
    assert refused.status_code == 400
    assert "volunteer_time must be one of company, own" in refused.get_data(as_text=True)
    assert count("attendance_sessions") == 3
    # A later version of a record replaces its time too.
    post_attendance([session(2, volunteer_time="company", updated_at="2026-11-04T09:00:00Z")])
    with db.read() as conn:
        assert (
            conn.execute(sa.text("SELECT own_time FROM attendance_sessions WHERE session_id = 'lang-2'")).scalar() == 0
        )
