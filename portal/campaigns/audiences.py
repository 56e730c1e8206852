"""Who a campaign goes to: the audience names, their labels, and the people each one means today.

An audience is `all_managers`, `language_volunteers`, `mentorship_volunteers` or `company:<id>`
(that company's managers and volunteers). Admins and deactivated accounts are never in one.
People who unsubscribed from campaigns, and addresses on the suppression list, are left out
and counted, so the preview can say how many and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlalchemy as sa

from portal.core.text import InputError
from portal.outbox import reads

NAMED = {
    "all_managers": "All managers",
    "language_volunteers": "TEEI Language volunteers",
    "mentorship_volunteers": "TEEI Mentorship volunteers",
}
_COMPANY = re.compile(r"^company:([1-9][0-9]{0,9})$")
_WHERE = {
    "all_managers": ("u.role = 'manager'", {}),
    "language_volunteers": ("u.role = 'employee' AND u.programme = 'language'", {}),
    "mentorship_volunteers": ("u.role = 'employee' AND u.programme = 'mentorship'", {}),
}


class AudienceError(InputError):
    """An audience that does not exist; the message is safe to show."""


@dataclass(frozen=True)
class Person:
    user_id: int
    email: str
    name: str


@dataclass(frozen=True)
class Reach:
    """An audience as of now: who would get the campaign, and how many are left out and why."""

    people: tuple[Person, ...]
    suppressed: int
    unsubscribed: int

    @property
    def recipients(self) -> int:
        return len(self.people)

    @property
    def left_out(self) -> int:
        return self.suppressed + self.unsubscribed


def company_choices(conn: sa.Connection) -> list[tuple[str, str]]:
    rows = conn.execute(sa.text("SELECT id, name FROM companies ORDER BY name_key")).all()
    return [(f"company:{row.id}", f"{row.name}: managers and volunteers") for row in rows]


def audience_choices(conn: sa.Connection) -> list[tuple[str, str]]:
    return [*NAMED.items(), *company_choices(conn)]


def _where(conn: sa.Connection, audience: str) -> tuple[str, dict]:
    if audience in _WHERE:
        return _WHERE[audience]
    match = _COMPANY.match(audience or "")
    if match:
        company_id = int(match.group(1))
        if conn.execute(sa.text("SELECT 1 FROM companies WHERE id = :c"), {"c": company_id}).first():
            return "u.role IN ('manager', 'employee') AND u.company_id = :company_id", {"company_id": company_id}
    raise AudienceError("Choose an audience from the list.")


def check_audience(conn: sa.Connection, audience: str) -> None:
    _where(conn, audience)


def audience_label(conn: sa.Connection, audience: str) -> str:
    if audience in NAMED:
        return NAMED[audience]
    match = _COMPANY.match(audience or "")
    name = match and conn.execute(sa.text("SELECT name FROM companies WHERE id = :c"), {"c": int(match.group(1))})
    name = name.scalar() if name else None
    return f"{name}: managers and volunteers" if name else audience


def reach(conn: sa.Connection, audience: str) -> Reach:
    """Everyone in the audience now, without the unsubscribed and the suppressed (counted apart)."""
    where, params = _where(conn, audience)
    rows = conn.execute(
        sa.text(
            f"""
            SELECT u.id, u.email, u.name, (x.user_id IS NOT NULL) AS unsubscribed
            FROM users u LEFT JOIN campaign_unsubscribes x ON x.user_id = u.id
            WHERE {where} AND u.deactivated_at IS NULL
            ORDER BY u.id
            """
        ),
        params,
    ).all()
    suppressed = reads.suppressed_among(conn, [row.email for row in rows if not row.unsubscribed])
    people = tuple(
        Person(row.id, row.email, row.name) for row in rows if not row.unsubscribed and row.email not in suppressed
    )
    return Reach(people, suppressed=len(suppressed), unsubscribed=sum(1 for row in rows if row.unsubscribed))
