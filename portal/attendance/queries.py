"""Attendance reads. Hour figures count `minutes` of attended sessions, by the company at held_at."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.core.db import Database


@dataclass(frozen=True)
class CompanyAttendance:
    sessions: int  # attended sessions
    minutes: int  # their minutes

    @property
    def hours(self) -> float:
        return self.minutes / 60


def company_attendance(
    db: Database, *, company_id: int, held_from: str | None = None, held_before: str | None = None
) -> CompanyAttendance:
    """Attended sessions and minutes credited to a company, optionally within [held_from, held_before)."""
    with db.read() as conn:
        row = conn.execute(
            sa.text("""
                SELECT COUNT(*), COALESCE(SUM(minutes), 0) FROM attendance_sessions
                WHERE company_id = :company_id AND status = 'attended'
                  AND (:held_from IS NULL OR held_at >= :held_from)
                  AND (:held_before IS NULL OR held_at < :held_before)
            """),
            {"company_id": company_id, "held_from": held_from, "held_before": held_before},
        ).one()
    return CompanyAttendance(sessions=row[0], minutes=row[1])


def unmatched_sessions(db: Database) -> int:
    """Stored sessions whose volunteer has no account yet (they count once the account exists)."""
    with db.read() as conn:
        return conn.execute(sa.text("SELECT COUNT(*) FROM attendance_sessions WHERE user_id IS NULL")).scalar_one()
