"""Reading demo requests: the admin's list, newest first."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.core.clock import display_time
from portal.core.db import Database
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

    @property
    def received_on(self) -> str:
        return display_time(self.created_at)


def demo_request_page(db: Database, *, query: str = "", number: int = 1, per_page: int = PER_PAGE) -> Page:
    """One page of demo submissions, newest first, filtered by name, address or company."""
    where, params = "1=1", limits(number, per_page)
    if query.strip():
        where = (
            "(lower(s.name) LIKE :p ESCAPE '\\' OR s.email LIKE :p ESCAPE '\\' OR lower(s.company) LIKE :p ESCAPE '\\')"
        )
        params["p"] = like_pattern(query)
    with db.read() as conn:
        total = conn.execute(sa.text(f"SELECT COUNT(*) FROM demo_submissions s WHERE {where}"), params).scalar_one()
        rows = conn.execute(
            sa.text(
                f"""
                SELECT s.id, s.name, s.email, s.company, s.message, s.created_at, l.request_count
                FROM demo_submissions s JOIN demo_leads l ON l.id = s.lead_id
                WHERE {where} ORDER BY s.created_at DESC, s.id DESC LIMIT :limit OFFSET :offset
                """
            ),
            params,
        ).mappings()
        items = [DemoRequestRow(**row) for row in rows]
    return Page(items=items, total=total, number=number, per_page=per_page)
