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
from portal.auth import ensure_company, hash_password, insert_user
from portal.core.db import Database
from portal.core.pseudonyms import pseudonyms_of
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


def seed_demo(
    db: Database, *, secret_key: str, attendance: bool = True, history: bool = False
) -> list[tuple[str, str, str]]:
    """Create the demo company, logins and employees, and (unless told not to) their sessions up to
    now; return (email, role, password) of the logins. Running it again changes nothing, and an
    account erased since is not made again (its sessions go to its pseudonym, as any platform's would).

    history=True (`flask demo seed`, so `make run`) adds a year of colleagues and their sessions
    (demo_history.py), so the report, its filing PDF and its crosswalk show real figures. Tests seed
    without it: they count the three employees above.
    """
    password_hash = hash_password(DEMO_PASSWORD)  # once, and outside the write (see insert_user)
    with db.write() as conn:
        company_id = ensure_company(conn, DEMO_COMPANY)
        logins = {}
        for email, role, name in DEMO_LOGINS:
            logins[email] = _user_once(
                conn,
                password_hash,
                secret_key,
                email=email,
                role=role,
                name=name,
                company_id=None if role == "admin" else company_id,
            )
        volunteers = (*DEMO_EMPLOYEES, *((*HISTORY_VOLUNTEERS, *HISTORY_COLLEAGUES) if history else ()))
        for email, name, programme, *_sessions in volunteers:
            _user_once(
                conn,
                password_hash,
                secret_key,
                email=email,
                role="employee",
                name=name,
                company_id=company_id,
                programme=programme,
            )
        if history:
            backdate_company(conn, company_id, datetime.now(UTC))
    if attendance:
        for platform, sessions in demo_sessions(datetime.now(UTC)).items():
            import_batch(
                db, [parse_item(session, default_platform=platform) for session in sessions], secret_key=secret_key
            )
    if history:
        for platform, sessions in history_sessions(datetime.now(UTC)).items():
            import_batch(
                db, [parse_item(session, default_platform=platform) for session in sessions], secret_key=secret_key
            )
    return [(email, role, DEMO_PASSWORD) for email, role, _ in DEMO_LOGINS if logins[email] is not None]


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


def _user_once(conn, password_hash, secret_key, *, email, role, name, company_id, programme=None) -> int | None:
    """The account's ID, made if need be; None for an account erased since (it is never made again)."""
    existing = conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": normalise_email(email)}).scalar()
    if existing is not None:
        return existing
    if pseudonyms_of(conn, [normalise_email(email)], secret_key):
        return None
    return insert_user(
        conn, email=email, password_hash=password_hash, role=role, company_id=company_id, name=name, programme=programme
    )


# A year of the demo company's volunteering, so the report shows what it is for: fourteen colleagues,
# seven in each programme, most from a year ago and a few joining later, attending every one to three
# weeks, some sessions missed; well above the filing PDF's threshold of 5 volunteers a group.
# Derived from the date, never from chance: a second run writes the same session IDs, a later run adds
# only the weeks since.
# (email, name, programme, weeks ago they began, every how many weeks they attend)
HISTORY_VOLUNTEERS = (
    ("amina@northwind.example", "Amina Yusuf", "language", 56, 1),
    ("bjorn@northwind.example", "Bjørn Dahl", "mentorship", 56, 2),
    ("chen@northwind.example", "Chen Wei", "language", 55, 2),
    ("dagny@northwind.example", "Dagny Lunde", "mentorship", 55, 1),
    ("emeka@northwind.example", "Emeka Obi", "language", 54, 3),
    ("freya@northwind.example", "Freya Holm", "mentorship", 54, 2),
    ("goran@northwind.example", "Goran Petrović", "language", 53, 1),
    ("hanna@northwind.example", "Hanna Nilsen", "mentorship", 53, 3),
    ("ivar@northwind.example", "Ivar Strand", "language", 52, 2),
    ("julia@northwind.example", "Julia Nowak", "mentorship", 52, 1),
    ("karin@northwind.example", "Karin Moe", "language", 26, 2),
    ("leon@northwind.example", "Leon Fischer", "mentorship", 22, 2),
    ("mei@northwind.example", "Mei Tanaka", "language", 10, 1),
    ("nils@northwind.example", "Nils Aasen", "mentorship", 8, 1),
)
# Colleagues with an account who have not attended yet: participation is a share, not always 100%.
HISTORY_COLLEAGUES = (
    ("oda@northwind.example", "Oda Berge", "language", 57, 0),
    ("petter@northwind.example", "Petter Vik", "mentorship", 57, 0),
    ("ragnhild@northwind.example", "Ragnhild Sand", "language", 40, 0),
    ("sami@northwind.example", "Sami Haddad", "mentorship", 30, 0),
    ("tuva@northwind.example", "Tuva Eide", "language", 12, 0),
)
SESSION_MINUTES = (60, 45, 90, 60)


def history_sessions(now: datetime) -> dict[str, list[dict]]:
    """{platform: [session, ...]}: every history volunteer's sessions from when they began up to now.

    Language meets on Wednesdays at 17:00 UTC, mentorship on Thursdays at 15:00 UTC.
    """
    by_platform: dict[str, list[dict]] = {}
    for index, (email, _name, platform, began, every) in enumerate(HISTORY_VOLUNTEERS):
        weekday, hour = (2, 17) if platform == "language" else (3, 15)
        anchor = (now - timedelta(days=(now.weekday() - weekday) % 7)).replace(
            hour=hour, minute=0, second=0, microsecond=0
        )
        if anchor > now:
            anchor -= timedelta(weeks=1)
        for week in range(began, -1, -1):
            if (week + index) % every:
                continue
            held = anchor - timedelta(weeks=week)
            year, number, _ = held.isocalendar()
            by_platform.setdefault(platform, []).append(
                {
                    "session_id": f"hist-{platform[:4]}-{email.split('@')[0]}-{year}w{number:02d}",
                    "volunteer_email": email,
                    "held_at": held.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "minutes": SESSION_MINUTES[(number + index) % len(SESSION_MINUTES)],
                    "status": "no_show" if (number * 7 + index) % 13 == 0 else "attended",
                    "updated_at": (held + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                }
            )
    return by_platform


def backdate_company(conn: sa.Connection, company_id: int, now: datetime) -> None:
    """The demo company and its history volunteers joined when their sessions began, so its report
    periods, participation and year close start a year back rather than today, and People says
    when each joined (their membership's start, and their account's creation with it)."""
    joined = (now - timedelta(weeks=57)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    conn.execute(
        sa.text("UPDATE companies SET created_at = :at WHERE id = :c AND created_at > :at"),
        {"at": joined, "c": company_id},
    )
    # Its managers came with the partnership: People says they joined when the company did.
    conn.execute(
        sa.text(
            "UPDATE company_memberships SET started_at = :at WHERE company_id = :c AND started_at > :at "
            "AND ended_at IS NULL AND user_id IN (SELECT id FROM users WHERE company_id = :c AND role = 'manager')"
        ),
        {"at": joined, "c": company_id},
    )
    conn.execute(
        sa.text("UPDATE users SET created_at = :at WHERE company_id = :c AND role = 'manager' AND created_at > :at"),
        {"at": joined, "c": company_id},
    )
    for email, _name, _programme, began, _every in (*HISTORY_VOLUNTEERS, *HISTORY_COLLEAGUES):
        started = (now - timedelta(weeks=began + 1)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
        conn.execute(
            sa.text(
                "UPDATE company_memberships SET started_at = :at WHERE company_id = :c AND started_at > :at "
                "AND ended_at IS NULL AND user_id = (SELECT id FROM users WHERE email = :e)"
            ),
            {"at": started, "c": company_id, "e": email},
        )
        # Their account was made when they joined (an invitation accepted then), not at seeding.
        conn.execute(
            sa.text("UPDATE users SET created_at = :at WHERE email = :e AND company_id = :c AND created_at > :at"),
            {"at": started, "c": company_id, "e": email},
        )
