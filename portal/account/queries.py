"""Reading what a reset link opens."""

from __future__ import annotations

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database


def reset_link_problem(db: Database, token_hash: str) -> str | None:
    """None if the link (by its token's hash) can set a password; otherwise why not: 'unknown',
    'used' or 'expired'."""
    with db.read() as conn:
        row = conn.execute(
            sa.text(
                "SELECT r.used_at, r.expires_at, u.deactivated_at FROM password_resets r "
                "JOIN users u ON u.id = r.user_id WHERE r.token_hash = :hash"
            ),
            {"hash": token_hash},
        ).first()
    if row is None or row.deactivated_at is not None:
        return "unknown"
    if row.used_at is not None:
        return "used"
    if row.expires_at <= clock.now_iso():
        return "expired"
    return None
