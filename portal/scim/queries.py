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
    """One of the company's people, as a SCIM User shows them: an account, or an invitation the
    directory created that nobody accepted yet (user_id None; `deactivated_at` is its revocation).

    `id` is the SCIM id: the account's users.id, or for a person the directory invited 'inv-' and the
    invitation's id, before acceptance and after (the accepted invitation leads to the account)."""

    id: str
    user_id: int | None
    invitation_id: int | None
    email: str
    name: str | None
    role: str
    created_at: str
    deactivated_at: str | None
    department: str | None
    employee_number: str | None
    scim_external_id: str | None
    scim_updated_at: str | None


# A company's people the directory may see: its managers and volunteers, never an admin, never
# someone of another company, and not those it deleted; and the invitations it created that are
# still open or revoked (not accepted: an accepted one is its account, under the same id).
_PEOPLE = """
    SELECT * FROM (
        SELECT COALESCE('inv-' || i.id, CAST(u.id AS TEXT)) AS id, u.id AS user_id, i.id AS invitation_id, u.email,
               u.name, u.role, u.created_at, u.deactivated_at, u.department, u.employee_number, u.scim_external_id,
               u.scim_updated_at
        FROM users u LEFT JOIN invitations i ON i.accepted_user_id = u.id AND i.scim_created_at IS NOT NULL
        WHERE u.company_id = :company_id AND u.role != 'admin' AND u.scim_deleted_at IS NULL
        UNION ALL
        SELECT 'inv-' || id, NULL, id, email, name, role, created_at, revoked_at, department, NULL, NULL, scim_created_at
        FROM invitations
        WHERE company_id = :company_id AND scim_created_at IS NOT NULL AND accepted_at IS NULL
          AND scim_deleted_at IS NULL
    )
"""


def company_for_token(db: Database, token: str) -> int | None:
    """The company whose live token this is; None for an unknown or revoked one."""
    with db.read() as conn:
        return conn.execute(
            sa.text("SELECT company_id FROM scim_tokens WHERE token_hash = :hash AND revoked_at IS NULL"),
            {"hash": token_hash(token)},
        ).scalar()


def person(db: Database, *, company_id: int, scim_id: str) -> Person | None:
    with db.read() as conn:
        row = (
            conn.execute(sa.text(f"{_PEOPLE} WHERE id = :id"), {"id": scim_id, "company_id": company_id})
            .mappings()
            .first()
        )
    return Person(**row) if row else None


def people(
    db: Database, *, company_id: int, user_name: str | None, start_index: int, count: int
) -> tuple[int, list[Person]]:
    """(total, one page) of the company's people, oldest first; `user_name` filters by address (eq)."""
    where, params = "true", {"company_id": company_id, "limit": count, "offset": start_index - 1}
    if user_name is not None:
        where = "email = :email"
        params["email"] = user_name
    with db.read() as conn:
        total = conn.execute(sa.text(f"SELECT COUNT(*) FROM ({_PEOPLE} WHERE {where})"), params).scalar_one()
        rows = conn.execute(
            sa.text(
                f"{_PEOPLE} WHERE {where} ORDER BY created_at, user_id IS NULL, user_id, invitation_id "
                "LIMIT :limit OFFSET :offset"
            ),
            params,
        ).mappings()
        return total, [Person(**row) for row in rows]
