"""The demo company that `flask demo seed` (and `make run`) creates, idempotently."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from portal.auth.operations import ensure_company, insert_user
from portal.db import Database
from portal.text import normalise_email

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


def seed_demo(db: Database, now: datetime | None = None) -> list[tuple[str, str, str]]:
    """Create the demo company, logins, employees and attendance; return (email, role, password)."""
    now = now or datetime.now(UTC)
    with db.write() as conn:
        company_id = ensure_company(conn, DEMO_COMPANY)
        for email, role, name in DEMO_LOGINS:
            _user_once(conn, email=email, role=role, name=name, company_id=None if role == "admin" else company_id)
        for email, name, programme, sessions in DEMO_EMPLOYEES:
            user_id = _user_once(
                conn, email=email, role="employee", name=name, company_id=company_id, programme=programme
            )
            for week in range(sessions):
                held_at = (now - timedelta(days=7 * week + 2)).replace(hour=17, minute=0, second=0, microsecond=0)
                conn.execute(
                    sa.text(
                        "INSERT INTO session_attendance (user_id, programme, held_at, minutes) "
                        "VALUES (:u, :p, :t, :m) ON CONFLICT (user_id, held_at) DO NOTHING"
                    ),
                    {"u": user_id, "p": programme, "t": held_at.isoformat(), "m": 60 if week % 3 else 90},
                )
    return [(email, role, DEMO_PASSWORD) for email, role, _ in DEMO_LOGINS]


def _user_once(conn, *, email, role, name, company_id, programme=None) -> int:
    existing = conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": normalise_email(email)}).scalar()
    if existing is not None:
        return existing
    return insert_user(
        conn, email=email, password=DEMO_PASSWORD, role=role, company_id=company_id, name=name, programme=programme
    )
