"""Migration 0006 on a database that already holds users and old-style attendance."""

import shutil

import sqlalchemy as sa

from portal.attendance.queries import company_attendance
from portal.core import schema
from portal.core.db import Database


def test_old_attendance_and_users_carry_over(tmp_path):
    before = tmp_path / "before"
    before.mkdir()
    for path in sorted(schema.MIGRATIONS_DIR.glob("*.sql")):
        if path.name < "0006":
            shutil.copy(path, before / path.name)
    db = Database(f"sqlite+libsql:///{tmp_path / 'old.db'}")
    schema.upgrade(db, before)
    with db.write() as conn:
        conn.exec_driver_sql("INSERT INTO companies (id, name, name_key) VALUES (1, 'Acme', 'acme')")
        conn.exec_driver_sql(
            "INSERT INTO users (id, email, password_hash, role, company_id, programme, created_at) "
            "VALUES (1, 'heidi@acme.example', 'x', 'employee', 1, 'language', '2026-11-20T10:00:00.000Z'),"
            " (2, 'admin@teei.example', 'x', 'admin', NULL, NULL, '2026-11-20T10:00:00.000Z')"
        )
        conn.exec_driver_sql(
            "INSERT INTO session_attendance (user_id, programme, held_at, minutes) VALUES "
            "(1, 'language', '2026-11-03T17:00:00+00:00', 60),"
            "(1, 'language', '2026-11-10T18:00:00+01:00', 90)"
        )

    applied = schema.upgrade(db)
    assert "0006_attendance.sql" in applied

    # Both sessions still count for Acme, though held before Heidi's account was created.
    assert company_attendance(db, company_id=1).minutes == 150
    with db.read() as conn:
        held = conn.execute(sa.text("SELECT held_at FROM attendance_sessions ORDER BY held_at")).scalars().all()
        memberships = conn.execute(
            sa.text("SELECT user_id, company_id, started_at, ended_at FROM company_memberships")
        ).all()
        old_table = conn.execute(
            sa.text("SELECT COUNT(*) FROM sqlite_master WHERE name = 'session_attendance'")
        ).scalar()
    assert held == ["2026-11-03T17:00:00.000000Z", "2026-11-10T17:00:00.000000Z"]
    assert memberships == [(1, 1, "2026-11-20T10:00:00.000000Z", None)]
    assert old_table == 0
    db.dispose()
