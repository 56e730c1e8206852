"""A company's volunteers and their hours, always read within one company."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.db import Database
from portal.programmes import PROGRAMMES


@dataclass(frozen=True)
class EmployeeHours:
    id: int
    name: str
    email: str
    programme: str | None
    sessions: int
    hours: float

    @property
    def programme_label(self) -> str:
        return PROGRAMMES.get(self.programme or "", "Not chosen yet")


@dataclass(frozen=True)
class Session:
    held_at: str
    programme: str
    minutes: int


def employee_hours(db: Database, *, company_id: int) -> list[EmployeeHours]:
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                """
                SELECT u.id, u.name, u.email, u.programme,
                       COUNT(a.id) AS sessions, COALESCE(SUM(a.minutes), 0) / 60.0 AS hours
                FROM users u LEFT JOIN session_attendance a ON a.user_id = u.id
                WHERE u.company_id = :company_id AND u.role = 'employee'
                GROUP BY u.id ORDER BY u.name, u.email
                """
            ),
            {"company_id": company_id},
        ).mappings()
        return [EmployeeHours(**row) for row in rows]


def employee_sessions(db: Database, *, company_id: int, employee_id: int) -> tuple[EmployeeHours, list[Session]] | None:
    """One employee's sessions, or None when the employee is not in this company."""
    employee = next((e for e in employee_hours(db, company_id=company_id) if e.id == employee_id), None)
    if employee is None:
        return None
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT held_at, programme, minutes FROM session_attendance WHERE user_id = :id ORDER BY held_at DESC"
            ),
            {"id": employee_id},
        ).mappings()
        return employee, [Session(**row) for row in rows]
