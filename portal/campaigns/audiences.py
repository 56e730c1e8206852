"""Who a campaign goes to: the audience names, their labels, and the people each one means today.

An audience is `all_managers`, `language_volunteers`, `mentorship_volunteers` or `company:<id>`
(that company's managers and volunteers). Admins and deactivated accounts are never in one.
People who unsubscribed from campaigns or opted out of the campaign's topic, and addresses on the suppression list, are left out
and counted, so the preview can say how many and why. Each person comes with their reading language
(their own choice, else their company's: `reading_language` in portal/auth/queries.py), read in
the same query, which picks the version of the campaign they get (versions.py).

Labels are in the language asked for (the page's); the worker never shows one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlalchemy as sa

from portal.campaigns import versions
from portal.core.i18n import ENGLISH, N_, choose_language, translate
from portal.core.text import InputError
from portal.outbox.operate import reads

NAMED = {
    "all_managers": N_("All managers"),
    "language_volunteers": N_("TEEI Language volunteers"),
    "mentorship_volunteers": N_("TEEI Mentorship volunteers"),
}
COMPANY_LABEL = N_("%(company)s: managers and volunteers")
NOT_ON_THE_LIST = N_("Choose an audience from the list.")
_COMPANY = re.compile(r"^company:([1-9][0-9]{0,9})$")
_WHERE = {
    "all_managers": ("u.role = 'manager'", {}),
    "language_volunteers": ("u.role = 'employee' AND u.programme = 'language'", {}),
    "mentorship_volunteers": ("u.role = 'employee' AND u.programme = 'mentorship'", {}),
}


class AudienceError(InputError):
    """An audience that does not exist; the message is safe to show (`message`, in English, is the
    catalogue's message: a page shows it in its own language)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message, self.values = message, {}


@dataclass(frozen=True)
class Person:
    user_id: int
    email: str
    name: str
    language: str = ENGLISH  # the language they read: their own choice, else their company's


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

    def versions(self, available) -> dict[str, int]:
        """{version: how many of these people would get it}, for a campaign with `available` versions."""
        return versions.counted((person.language for person in self.people), available)

    def readers_of(self, language: str) -> int:
        """How many of these people read `language`."""
        return sum(1 for person in self.people if person.language == language)


def company_choices(conn: sa.Connection, language: str = ENGLISH) -> list[tuple[str, str]]:
    rows = conn.execute(sa.text("SELECT id, name FROM companies ORDER BY name_key")).all()
    return [(f"company:{row.id}", translate(language, COMPANY_LABEL, company=row.name)) for row in rows]


def audience_choices(conn: sa.Connection, language: str = ENGLISH) -> list[tuple[str, str]]:
    named = [(audience, translate(language, label)) for audience, label in NAMED.items()]
    return [*named, *company_choices(conn, language)]


def _where(conn: sa.Connection, audience: str) -> tuple[str, dict]:
    if audience in _WHERE:
        return _WHERE[audience]
    match = _COMPANY.match(audience or "")
    if match:
        company_id = int(match.group(1))
        if conn.execute(sa.text("SELECT 1 FROM companies WHERE id = :c"), {"c": company_id}).first():
            return "u.role IN ('manager', 'employee') AND u.company_id = :company_id", {"company_id": company_id}
    raise AudienceError(NOT_ON_THE_LIST)


def check_audience(conn: sa.Connection, audience: str) -> None:
    _where(conn, audience)


def audience_label(conn: sa.Connection, audience: str, language: str = ENGLISH) -> str:
    if audience in NAMED:
        return translate(language, NAMED[audience])
    match = _COMPANY.match(audience or "")
    name = match and conn.execute(sa.text("SELECT name FROM companies WHERE id = :c"), {"c": int(match.group(1))})
    name = name.scalar() if name else None
    return translate(language, COMPANY_LABEL, company=name) if name else audience


def reach(conn: sa.Connection, audience: str, topic: str) -> Reach:
    """Everyone in the audience now, without the unsubscribed (from every campaign, or from the
    campaign's `topic`) and the suppressed (counted apart)."""
    where, params = _where(conn, audience)
    rows = conn.execute(
        sa.text(
            f"""
            SELECT u.id, u.email, u.name, (x.user_id IS NOT NULL OR t.user_id IS NOT NULL) AS unsubscribed,
                   u.language, c.language AS company_language
            FROM users u LEFT JOIN campaign_unsubscribes x ON x.user_id = u.id
                 LEFT JOIN campaign_topic_optouts t ON t.user_id = u.id AND t.topic = :topic
                 LEFT JOIN companies c ON c.id = u.company_id
            WHERE {where} AND u.deactivated_at IS NULL
            ORDER BY u.id
            """
        ),
        {**params, "topic": topic},
    ).all()
    suppressed = reads.suppressed_among(conn, [row.email for row in rows if not row.unsubscribed])
    people = tuple(
        Person(row.id, row.email, row.name, choose_language(row.language, (), row.company_language))
        for row in rows
        if not row.unsubscribed and row.email not in suppressed
    )
    return Reach(people, suppressed=len(suppressed), unsubscribed=sum(1 for row in rows if row.unsubscribed))
