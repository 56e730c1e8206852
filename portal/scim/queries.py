"""Reading what SCIM serves: the company a bearer token belongs to, and the company's people as Users."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import sqlalchemy as sa

from portal.core.db import Database


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Person:
    """One of the company's people, as a SCIM User shows them."""

    id: int
    email: str
    name: str
    role: str
    created_at: str
    deactivated_at: str | None
    department: str | None
    employee_number: str | None
    scim_external_id: str | None
    scim_updated_at: str | None


_COLUMNS = (
    "id, email, name, role, created_at, deactivated_at, department, employee_number, scim_external_id, scim_updated_at"
)
# A company's people the directory may see: its managers and volunteers, never an admin, never
# someone of another company, and not those it deleted.
_SEEN = "company_id = :company_id AND role != 'admin' AND scim_deleted_at IS NULL"


def company_for_token(db: Database, token: str) -> int | None:
    """The company whose live token this is; None for an unknown or revoked one."""
    with db.read() as conn:
        return conn.execute(
            sa.text("SELECT company_id FROM scim_tokens WHERE token_hash = :hash AND revoked_at IS NULL"),
            {"hash": token_hash(token)},
        ).scalar()


def person(db: Database, *, company_id: int, user_id: int) -> Person | None:
    with db.read() as conn:
        row = (
            conn.execute(
                sa.text(f"SELECT {_COLUMNS} FROM users WHERE id = :id AND {_SEEN}"),
                {"id": user_id, "company_id": company_id},
            )
            .mappings()
            .first()
        )
    return Person(**row) if row else None


def people(
    db: Database, *, company_id: int, user_name: str | None, start_index: int, count: int
) -> tuple[int, list[Person]]:
    """(total, one page) of the company's people, oldest first; `user_name` filters by address (eq)."""
    where, params = _SEEN, {"company_id": company_id, "limit": count, "offset": start_index - 1}
    if user_name is not None:
        where += " AND email = :email"
        params["email"] = user_name
    with db.read() as conn:
        total = conn.execute(sa.text(f"SELECT COUNT(*) FROM users WHERE {where}"), params).scalar_one()
        rows = conn.execute(
            sa.text(f"SELECT {_COLUMNS} FROM users WHERE {where} ORDER BY id LIMIT :limit OFFSET :offset"), params
        ).mappings()
        return total, [Person(**row) for row in rows]
