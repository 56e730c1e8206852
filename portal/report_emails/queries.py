"""Reading report email subscriptions: a manager's choice, and who is subscribed now.

Only a manager who is still in the company receives its report: a subscription whose owner left
(another company on the account, or no open membership in this one) or is no longer a manager is
ignored by every read here, so the schedule, a backfill and the page all agree.
"""

from __future__ import annotations

from typing import NamedTuple

import sqlalchemy as sa

from portal.core.db import Database
from portal.core.i18n import N_, choose_language
from portal.core.periods import MONTHLY, QUARTERLY

OFF = "off"
# Translated where they are shown (the form's choices, the page).
FREQUENCIES = {MONTHLY: N_("Every month"), QUARTERLY: N_("Every quarter"), OFF: N_("Off")}


class SubscriptionError(ValueError):
    """A choice that cannot be saved; the message is safe to show."""


class Subscriber(NamedTuple):
    id: int
    email: str
    name: str
    language: str  # the language their report email is written in (`reading_language`)


# A subscription counts only while its owner is a manager of that company, with an open membership.
STILL_A_MANAGER_HERE = """
    u.id = s.user_id AND u.role = 'manager' AND u.company_id = s.company_id
    AND EXISTS (SELECT 1 FROM company_memberships m
                WHERE m.user_id = u.id AND m.company_id = s.company_id AND m.ended_at IS NULL)
"""

_SUBSCRIBERS = sa.text(f"""
    SELECT u.id, u.email, u.name, u.language, c.language AS company_language
    FROM report_subscriptions s JOIN users u ON {STILL_A_MANAGER_HERE} JOIN companies c ON c.id = s.company_id
    WHERE s.company_id = :company_id AND s.frequency = :frequency
    ORDER BY u.id
""")

# Per company and frequency, the earliest moment a current subscriber chose it: periods closing
# after it are due (so a new subscriber never receives the company's history).
_SUBSCRIBED_COMPANIES = sa.text(f"""
    SELECT s.company_id, c.name AS company_name, s.frequency, MIN(s.since) AS since
    FROM report_subscriptions s JOIN users u ON {STILL_A_MANAGER_HERE} JOIN companies c ON c.id = s.company_id
    WHERE s.frequency != '{OFF}'
    GROUP BY s.company_id, s.frequency
    ORDER BY s.company_id, s.frequency
""")


def subscribers(conn: sa.Connection, *, company_id: int, frequency: str) -> list[Subscriber]:
    """The company's managers subscribed at this frequency now, each with the language their email is
    written in, on the caller's transaction (the one that writes the emails)."""
    rows = conn.execute(_SUBSCRIBERS, {"company_id": company_id, "frequency": frequency})
    return [
        Subscriber(row.id, row.email, row.name, choose_language(row.language, (), row.company_language)) for row in rows
    ]


_READER = sa.text("""
    SELECT u.language, c.language AS company_language FROM users u LEFT JOIN companies c ON c.id = u.company_id
    WHERE u.id = :user_id
""")


def reading_language(conn: sa.Connection, *, user_id: int) -> str:
    """The language the portal writes to this manager in, on the caller's transaction: their own
    choice, else their company's, else English. The same rule as portal/auth/queries.py's
    `reading_language` (portal.core.i18n.choose_language), read here by the account's id: the auth
    area's face does not offer that function to other areas."""
    row = conn.execute(_READER, {"user_id": user_id}).first()
    return choose_language(row.language if row else None, (), row.company_language if row else None)


def subscribed_companies(db: Database) -> list[dict]:
    with db.read() as conn:
        return [dict(row) for row in conn.execute(_SUBSCRIBED_COMPANIES).mappings()]


def frequency_of_user(db: Database, *, user_id: int, company_id: int) -> str:
    """The manager's current choice for this company; `off` when none was made."""
    with db.read() as conn:
        found = conn.execute(
            sa.text("SELECT frequency FROM report_subscriptions WHERE user_id = :u AND company_id = :c"),
            {"u": user_id, "c": company_id},
        ).scalar()
    return found or OFF
