"""Reading demo requests: the admin's list, newest first."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.core.db import Database
from portal.demo.operations import STATUS_LABELS
from portal.web.paging import PER_PAGE, Page, like_pattern, limits


@dataclass(frozen=True)
class DemoRequestRow:
    id: int
    name: str
    email: str
    company: str
    message: str
    created_at: str
    request_count: int  # how many times this address asked, in all
    status: str = "new"
    note: str = ""
    status_changed_at: str | None = None
    status_changed_by: str | None = None  # the admin's name or address

    @property
    def status_label(self) -> str:
        return STATUS_LABELS[self.status]


_SELECT = """
    SELECT s.id, s.name, s.email, s.company, s.message, s.created_at, l.request_count,
           s.status, s.note, s.status_changed_at, COALESCE(NULLIF(u.name, ''), u.email) AS status_changed_by
    FROM demo_submissions s JOIN demo_leads l ON l.id = s.lead_id LEFT JOIN users u ON u.id = s.status_changed_by
"""


def status_counts(db: Database) -> dict[str, int]:
    with db.read() as conn:
        counts = dict(conn.execute(sa.text("SELECT status, COUNT(*) FROM demo_submissions GROUP BY status")).all())
    return {status: counts.get(status, 0) for status in STATUS_LABELS}


def demo_request(db: Database, submission_id: int) -> DemoRequestRow | None:
    with db.read() as conn:
        row = conn.execute(sa.text(f"{_SELECT} WHERE s.id = :id"), {"id": submission_id}).mappings().first()
    return DemoRequestRow(**row) if row else None


def demo_request_page(
    db: Database, *, query: str = "", status: str = "", number: int = 1, per_page: int = PER_PAGE
) -> Page:
    """One page of demo submissions, newest first, in one status (or all), filtered by name, address or company."""
    conditions, params = ["1=1"], limits(number, per_page)
    if status in STATUS_LABELS:
        conditions.append("s.status = :status")
        params["status"] = status
    if query.strip():
        conditions.append(
            "(lower(s.name) LIKE :p ESCAPE '\\' OR s.email LIKE :p ESCAPE '\\' OR lower(s.company) LIKE :p ESCAPE '\\')"
        )
        params["p"] = like_pattern(query)
    where = " AND ".join(conditions)
    with db.read() as conn:
        total = conn.execute(sa.text(f"SELECT COUNT(*) FROM demo_submissions s WHERE {where}"), params).scalar_one()
        rows = conn.execute(
            sa.text(f"{_SELECT} WHERE {where} ORDER BY s.created_at DESC, s.id DESC LIMIT :limit OFFSET :offset"),
            params,
        ).mappings()
        items = [DemoRequestRow(**row) for row in rows]
    return Page(items=items, total=total, number=number, per_page=per_page)
