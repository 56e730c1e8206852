"""What an admin sees across every partner company."""

from __future__ import annotations

import sqlalchemy as sa

from portal.core.db import Database
from portal.web.paging import like_pattern


def company_summaries(db: Database, *, query: str = "") -> list[dict]:
    """Every partner company whose name contains `query`, by name, with its people and the day it joined."""
    where, params = "1=1", {}
    if query.strip():
        where, params = "c.name_key LIKE :p ESCAPE '\\'", {"p": like_pattern(query)}
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                f"""
                SELECT c.id, c.name, c.created_at,
                       SUM(u.role = 'manager' AND u.deactivated_at IS NULL) AS managers,
                       SUM(u.role = 'employee' AND u.deactivated_at IS NULL) AS employees
                FROM companies c LEFT JOIN users u ON u.company_id = c.id
                WHERE {where}
                GROUP BY c.id ORDER BY c.name
                """
            ),
            params,
        ).mappings()
        return [dict(row) for row in rows]


def company(db: Database, company_id: int) -> dict | None:
    with db.read() as conn:
        row = (
            conn.execute(
                sa.text("SELECT id, name, name_key, created_at FROM companies WHERE id = :id"), {"id": company_id}
            )
            .mappings()
            .first()
        )
    return dict(row) if row else None


def company_applications(db: Database, company: dict) -> list[dict]:
    """The applications that made this company a partner or name it, newest first."""
    with db.read() as conn:
        return [
            dict(row)
            for row in conn.execute(
                sa.text(
                    "SELECT id, contact_name, contact_email, state, created_at FROM company_applications "
                    "WHERE company_id = :id OR company_key = :key ORDER BY created_at DESC, id DESC LIMIT 50"
                ),
                {"id": company["id"], "key": company["name_key"]},
            ).mappings()
        ]
