"""Reading partner applications: the admin's lists and one application with its history."""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa

from portal.applications.emails import received_key
from portal.applications.states import DECISION_LABELS, OPEN_STATES, STATE_LABELS, STATES
from portal.core.db import Database
from portal.outbox.operate import reads
from portal.web.paging import PER_PAGE, Page, like_pattern, limits


@dataclass(frozen=True)
class Application:
    id: int
    company_name: str
    contact_name: str
    contact_email: str
    employee_count: int
    message: str
    state: str
    decision_count: int
    company_id: int | None
    created_at: str
    updated_at: str

    @property
    def state_label(self) -> str:
        return STATE_LABELS[self.state]

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_STATES


@dataclass(frozen=True)
class Decision:
    sequence: int
    decision: str
    note: str
    decided_by: str
    email_status: str | None
    created_at: str

    @property
    def label(self) -> str:
        return DECISION_LABELS[self.decision]


@dataclass(frozen=True)
class ApplicationDetail:
    application: Application
    decisions: list[Decision] = field(default_factory=list)
    received_email_status: str | None = None
    company_exists: bool = False  # approving would add a manager to an existing partner
    contact_has_account: bool = False


_COLUMNS = ", ".join(Application.__dataclass_fields__)


def state_counts(db: Database) -> dict[str, int]:
    with db.read() as conn:
        counts = dict(conn.execute(sa.text("SELECT state, COUNT(*) FROM company_applications GROUP BY state")).all())
    return {state: counts.get(state, 0) for state in STATES}


def new_count(db: Database) -> int:
    """Applications no admin has decided yet: the count the admin navigation shows."""
    with db.read() as conn:
        return conn.execute(sa.text("SELECT COUNT(*) FROM company_applications WHERE state = 'new'")).scalar_one()


def application_page(
    db: Database, *, state: str = "", query: str = "", number: int = 1, per_page: int = PER_PAGE
) -> Page:
    """One page of applications, newest first, in one state (or all), whose company or contact matches."""
    where, params = ["1=1"], limits(number, per_page)
    if state in STATES:
        where.append("state = :state")
        params["state"] = state
    if query.strip():
        where.append(
            "(company_key LIKE :p ESCAPE '\\' OR lower(contact_name) LIKE :p ESCAPE '\\' "
            "OR contact_email LIKE :p ESCAPE '\\')"
        )
        params["p"] = like_pattern(query)
    condition = " AND ".join(where)
    with db.read() as conn:
        total = conn.execute(
            sa.text(f"SELECT COUNT(*) FROM company_applications WHERE {condition}"), params
        ).scalar_one()
        rows = conn.execute(
            sa.text(
                f"SELECT {_COLUMNS} FROM company_applications WHERE {condition} "
                "ORDER BY created_at DESC, id DESC LIMIT :limit OFFSET :offset"
            ),
            params,
        ).mappings()
        items = [Application(**row) for row in rows]
    return Page(items=items, total=total, number=number, per_page=per_page)


def get_application(db: Database, application_id: int) -> ApplicationDetail | None:
    with db.read() as conn:
        row = (
            conn.execute(sa.text(f"SELECT {_COLUMNS} FROM company_applications WHERE id = :id"), {"id": application_id})
            .mappings()
            .first()
        )
        if row is None:
            return None
        application = Application(**row)
        decisions = (
            conn.execute(
                sa.text(
                    """
                SELECT d.sequence, d.decision, d.note, COALESCE(NULLIF(u.name, ''), u.email) AS decided_by,
                       d.outbox_id, d.created_at
                FROM application_decisions d JOIN users u ON u.id = d.decided_by
                WHERE d.application_id = :id ORDER BY d.sequence
                """
                ),
                {"id": application_id},
            )
            .mappings()
            .all()
        )
        email_statuses = reads.statuses_by_id(conn, [d["outbox_id"] for d in decisions])
        received = reads.status_by_key(conn, received_key(application_id))
        company_exists = (
            application.is_open
            and conn.execute(
                sa.text("SELECT 1 FROM companies WHERE name_key = :k"), {"k": application.company_name.lower()}
            ).first()
            is not None
        )
        has_account = (
            conn.execute(sa.text("SELECT 1 FROM users WHERE email = :e"), {"e": application.contact_email}).first()
            is not None
        )
    history = [
        Decision(
            sequence=d["sequence"],
            decision=d["decision"],
            note=d["note"],
            decided_by=d["decided_by"],
            email_status=email_statuses.get(d["outbox_id"]),
            created_at=d["created_at"],
        )
        for d in decisions
    ]
    return ApplicationDetail(application, history, received, company_exists, has_account)
