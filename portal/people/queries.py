"""Reading a company's people: a page of them, and one colleague a manager acts on."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.core.db import Database
from portal.core.i18n import N_
from portal.core.programmes import PROGRAMMES
from portal.web.paging import PER_PAGE, Page, like_pattern, limits

PERSON_STATES = ("active", "deactivated")
# In English (marked for the catalogue); a page shows them in its own language.
ROLE_WORDS = {"manager": N_("Manager"), "employee": N_("Volunteer")}


@dataclass(frozen=True)
class Person:
    id: int
    email: str
    name: str
    role: str
    programme: str | None
    created_at: str
    deactivated_at: str | None
    department: str | None = None
    joined_at: str | None = None  # when they first belonged to the company (its memberships)

    @property
    def role_label(self) -> str:
        return ROLE_WORDS[self.role]

    @property
    def programme_name(self) -> str:
        return PROGRAMMES.get(self.programme or "", "")

    @property
    def display_name(self) -> str:
        return self.name or self.email


# "Joined" is the start of the person's first membership of the company (an account made by an
# invitation, the directory or a sign-in starts one at once; company_memberships keeps them), not
# the account row's creation: the two differ for an account whose history was imported or seeded.
_COLUMNS = (
    "id, email, name, role, programme, created_at, deactivated_at, department, "
    "COALESCE((SELECT MIN(m.started_at) FROM company_memberships m "
    "WHERE m.user_id = users.id AND m.company_id = users.company_id), created_at) AS joined_at"
)


def people_page(
    db: Database, *, company_id: int, query: str = "", state: str = "active", number: int = 1, per_page: int = PER_PAGE
) -> Page:
    """One page of the company's people, managers first, then by name; filtered by name or address."""
    where = ["company_id = :company_id"]
    params = {"company_id": company_id, **limits(number, per_page)}
    if state == "active":
        where.append("deactivated_at IS NULL")
    elif state == "deactivated":
        where.append("deactivated_at IS NOT NULL")
    if query.strip():
        where.append("(lower(name) LIKE :pattern ESCAPE '\\' OR email LIKE :pattern ESCAPE '\\')")
        params["pattern"] = like_pattern(query)
    condition = " AND ".join(where)
    with db.read() as conn:
        total = conn.execute(sa.text(f"SELECT COUNT(*) FROM users WHERE {condition}"), params).scalar_one()
        rows = conn.execute(
            sa.text(
                f"SELECT {_COLUMNS} FROM users WHERE {condition} "
                "ORDER BY role = 'manager' DESC, lower(COALESCE(NULLIF(name, ''), email)), id LIMIT :limit OFFSET :offset"
            ),
            params,
        ).mappings()
        items = [Person(**row) for row in rows]
    return Page(items=items, total=total, number=number, per_page=per_page)


def find_colleague(db: Database, *, company_id: int, user_id: int) -> Person | None:
    with db.read() as conn:
        row = (
            conn.execute(
                sa.text(f"SELECT {_COLUMNS} FROM users WHERE id = :id AND company_id = :company_id"),
                {"id": user_id, "company_id": company_id},
            )
            .mappings()
            .first()
        )
    return Person(**row) if row else None
