"""What an admin sees across every partner company."""

from __future__ import annotations

import sqlalchemy as sa

from portal.db import Database


def company_summaries(db: Database) -> list[dict]:
    with db.read() as conn:
        return [
            dict(row)
            for row in conn.execute(
                sa.text(
                    """
                    SELECT c.id, c.name,
                           SUM(u.role = 'manager') AS managers,
                           SUM(u.role = 'employee') AS employees
                    FROM companies c LEFT JOIN users u ON u.company_id = c.id
                    GROUP BY c.id ORDER BY c.name
                    """
                )
            ).mappings()
        ]
