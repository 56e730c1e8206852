"""The development programme simulator (make run) sends the demo attendance through the real API."""

from datetime import UTC, datetime

from devtools.programme_simulator import send_demo_attendance
from portal.attendance.queries import company_attendance, unmatched_sessions
from portal.seed import DEMO_COMPANY, seed_demo


def test_demo_hours_arrive_signed_over_http_and_a_rerun_changes_nothing(live_portal, db, settings, company_id):
    seed_demo(db, secret_key=settings.secret_key, attendance=False)
    url = f"{live_portal}/api/attendance"
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    first = send_demo_attendance(url, settings.attendance_webhook_secret, now=now)
    assert first["language"]["unmatched"] == 2  # the colleague without an account yet
    assert first["mentorship"] == {"received": 6, "applied": 6, "unmatched": 0, "stale": 0}
    northwind = company_attendance(db, company_id=company_id(DEMO_COMPANY))
    # 9 + 6 + 12 weekly sessions, one no-show each.
    assert northwind.sessions == 24 and northwind.minutes >= 24 * 60

    assert send_demo_attendance(url, settings.attendance_webhook_secret, now=now) == first
    assert company_attendance(db, company_id=company_id(DEMO_COMPANY)) == northwind
    assert unmatched_sessions(db) == 2


def test_demo_seed_writes_the_same_sessions_the_simulator_posts(live_portal, db, settings, company_id):
    seed_demo(db, secret_key=settings.secret_key)
    seeded = company_attendance(db, company_id=company_id(DEMO_COMPANY))
    assert seeded.sessions == 24
    answers = send_demo_attendance(f"{live_portal}/api/attendance", settings.attendance_webhook_secret)
    assert all(answer["applied"] == 0 for answer in answers.values())  # nothing new: the same IDs and versions
    assert company_attendance(db, company_id=company_id(DEMO_COMPANY)) == seeded
