"""The demo company that `flask demo seed` (and `make run`) creates, idempotently.

Its employees' weekly sessions (`demo_sessions`) are applied by the same rules as the attendance
API. `make run` seeds without them and lets the development programme simulator
(devtools/programme_simulator.py) post the same sessions, signed, through POST /api/attendance.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from portal.attendance.operations import import_batch
from portal.attendance.validation import parse_item
from portal.auth.operations import ensure_company, insert_user
from portal.core.db import Database
from portal.core.text import normalise_email

DEMO_COMPANY = "Northwind Logistics"
DEMO_PASSWORD = "demo-password-1"
DEMO_LOGINS = (
    ("admin@teei.example", "admin", "Ada Admin"),
    ("manager@northwind.example", "manager", "Maja Manager"),
)
DEMO_EMPLOYEES = (
    ("olena@northwind.example", "Olena Kovalenko", "language", 9),
    ("marco@northwind.example", "Marco Silva", "mentorship", 6),
    ("heidi@northwind.example", "Heidi Berg", "language", 12),
)


def seed_demo(db: Database, *, attendance: bool = True) -> list[tuple[str, str, str]]:
    """Create the demo company, logins and employees, and (unless told not to) their sessions up to
    now; return (email, role, password) of the logins. Running it again changes nothing."""
    with db.write() as conn:
        company_id = ensure_company(conn, DEMO_COMPANY)
        for email, role, name in DEMO_LOGINS:
            _user_once(conn, email=email, role=role, name=name, company_id=None if role == "admin" else company_id)
        for email, name, programme, _sessions in DEMO_EMPLOYEES:
            _user_once(conn, email=email, role="employee", name=name, company_id=company_id, programme=programme)
    if attendance:
        for platform, sessions in demo_sessions(datetime.now(UTC)).items():
            import_batch(db, [parse_item(session, default_platform=platform) for session in sessions])
    return [(email, role, DEMO_PASSWORD) for email, role, _ in DEMO_LOGINS]


NOT_YET_REGISTERED = ("sofia@northwind.example", "language", 2)


def demo_sessions(now: datetime) -> dict[str, list[dict]]:
    """{platform: [session, ...]}: each person's weekly sessions (Tuesdays, 16:00 UTC) up to now."""
    tuesday = (now - timedelta(days=now.weekday() - 1)).replace(hour=16, minute=0, second=0, microsecond=0)
    if tuesday > now:
        tuesday -= timedelta(weeks=1)
    people = [(email, programme, count) for email, _name, programme, count in DEMO_EMPLOYEES]
    by_platform: dict[str, list[dict]] = {}
    for email, platform, count in [*people, NOT_YET_REGISTERED]:
        for week in range(count):
            held = tuesday - timedelta(weeks=week)
            year, number, _ = held.isocalendar()
            by_platform.setdefault(platform, []).append(
                {
                    "session_id": f"{platform[:4]}-{email.split('@')[0]}-{year}w{number:02d}",
                    "volunteer_email": email,
                    "held_at": _iso(held),
                    "minutes": 90 if number % 3 == 0 else 60,
                    "status": "no_show" if week == 4 else "attended",
                    "updated_at": _iso(held + timedelta(hours=1)),
                }
            )
    return by_platform


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _user_once(conn, *, email, role, name, company_id, programme=None) -> int:
    existing = conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": normalise_email(email)}).scalar()
    if existing is not None:
        return existing
    return insert_user(
        conn, email=email, password=DEMO_PASSWORD, role=role, company_id=company_id, name=name, programme=programme
    )
