"""Reading invitations: a company's list with each one's email state, and the one a link opens."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.db import Database
from portal.invitations import tokens
from portal.invitations.emails import invitation_subject
from portal.outbox import clock, reads


@dataclass(frozen=True)
class InvitationRow:
    id: int
    email: str
    programme: str
    state: str  # open, accepted, expired
    email_status: str | None  # the outbox status of its newest email; None if none was written
    created_at: str


def list_invitations(db: Database, *, company_id: int) -> list[InvitationRow]:
    now = clock.now_iso()
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                """
                SELECT id, email, programme, accepted_at, expires_at, created_at FROM invitations
                WHERE company_id = :company_id AND role = 'employee'
                ORDER BY created_at DESC, id DESC
                """
            ),
            {"company_id": company_id},
        ).all()
        statuses = reads.latest_statuses(conn, [invitation_subject(row.id) for row in rows])
    return [
        InvitationRow(
            id=row.id,
            email=row.email,
            programme=row.programme,
            state="accepted" if row.accepted_at else ("expired" if row.expires_at <= now else "open"),
            email_status=statuses.get(invitation_subject(row.id)),
            created_at=row.created_at,
        )
        for row in rows
    ]


@dataclass(frozen=True)
class OpenInvitation:
    id: int
    email: str
    role: str
    programme: str | None
    company_id: int
    company_name: str


def find_open_invitation(db: Database, token: str) -> tuple[OpenInvitation | None, str | None]:
    """The invitation a token opens, or None and why not ('unknown', 'used', 'expired', 'has_account').

    'has_account': the address already has an account (in another company; invite_colleagues does
    not tell the inviting manager so). Only the link's holder, the address's owner, learns it here.
    """
    with db.read() as conn:
        row = (
            conn.execute(
                sa.text(
                    "SELECT i.id, i.email, i.role, i.programme, i.company_id, c.name AS company_name, "
                    "i.accepted_at, i.expires_at, EXISTS (SELECT 1 FROM users u WHERE u.email = i.email) AS has_account "
                    "FROM invitations i JOIN companies c ON c.id = i.company_id "
                    "WHERE i.token_hash = :hash"
                ),
                {"hash": tokens.token_hash(token)},
            )
            .mappings()
            .first()
        )
    if row is None:
        return None, "unknown"
    if row["accepted_at"] is not None:
        return None, "used"
    if row["expires_at"] <= clock.now_iso():
        return None, "expired"
    if row["has_account"]:
        return None, "has_account"
    fields = ("id", "email", "role", "programme", "company_id", "company_name")
    return OpenInvitation(**{k: row[k] for k in fields}), None
