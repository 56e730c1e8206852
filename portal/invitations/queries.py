"""Reading invitations: a company's list with each one's email state, and the one a link opens."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database, json_array
from portal.invitations.emails import invitation_subject
from portal.outbox.operate import reads
from portal.web.paging import PER_PAGE, Page, like_pattern, limits


@dataclass(frozen=True)
class InvitationRow:
    id: int
    email: str
    name: str | None  # as pasted with the address, if it was
    programme: str | None
    role: str  # employee (a volunteer) or manager
    state: str  # open, accepted, expired, revoked
    email_status: str | None  # the outbox status of its newest email; None if none was written
    created_at: str


INVITATION_STATES = ("open", "accepted", "expired", "revoked")
# Each state as SQL over invitations i, with :now bound; one state per row, in this order.
_STATE_SQL = {
    "revoked": "i.revoked_at IS NOT NULL AND i.accepted_at IS NULL",
    "accepted": "i.accepted_at IS NOT NULL",
    "expired": "i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at <= :now",
    "open": "i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > :now",
}


def invitation_page(
    db: Database,
    *,
    company_id: int,
    query: str = "",
    state: str = "",
    number: int = 1,
    per_page: int = PER_PAGE,
    invitation_id: int | None = None,
) -> Page:
    """One page of a company's invitations, newest first, filtered by name or address and by state
    (or the one with `invitation_id`)."""
    where = ["i.company_id = :company_id"]
    params = {"company_id": company_id, "now": clock.now_iso(), **limits(number, per_page)}
    if invitation_id is not None:
        where.append("i.id = :invitation_id")
        params["invitation_id"] = invitation_id
    if query.strip():
        where.append("(i.email LIKE :pattern ESCAPE '\\' OR i.name LIKE :pattern ESCAPE '\\')")
        params["pattern"] = like_pattern(query)
    if state in _STATE_SQL:
        where.append(_STATE_SQL[state])
    condition = " AND ".join(where)
    with db.read() as conn:
        total = conn.execute(sa.text(f"SELECT COUNT(*) FROM invitations i WHERE {condition}"), params).scalar_one()
        rows = conn.execute(
            sa.text(
                f"""
                SELECT i.id, i.email, i.name, i.programme, i.role, i.accepted_at, i.revoked_at, i.expires_at, i.created_at
                FROM invitations i WHERE {condition}
                ORDER BY i.created_at DESC, i.id DESC LIMIT :limit OFFSET :offset
                """
            ),
            params,
        ).all()
        statuses = reads.latest_statuses(conn, [invitation_subject(row.id) for row in rows])
        approvals = _approval_email_statuses(conn, [row.id for row in rows if row.role == "manager"])
    items = [
        InvitationRow(
            id=row.id,
            email=row.email,
            name=row.name,
            programme=row.programme,
            role=row.role,
            state=_state(row, params["now"]),
            email_status=statuses.get(invitation_subject(row.id), approvals.get(row.id)),
            created_at=row.created_at,
        )
        for row in rows
    ]
    return Page(items=items, total=total, number=number, per_page=per_page)


def _approval_email_statuses(conn: sa.Connection, invitation_ids: list[int]) -> dict[int, str]:
    """A first manager's invitation went out inside the approval email, not an invitation email of
    its own: that email's status stands for it until it is sent again."""
    if not invitation_ids:
        return {}
    pairs = conn.execute(
        sa.text(
            "SELECT invitation_id, outbox_id FROM application_decisions "
            "WHERE invitation_id IN (SELECT value FROM json_each(:ids))"
        ),
        {"ids": json_array(invitation_ids)},
    ).all()
    by_outbox = reads.statuses_by_id(conn, [outbox_id for _, outbox_id in pairs])
    return {invitation_id: by_outbox[outbox_id] for invitation_id, outbox_id in pairs if outbox_id in by_outbox}


def list_invitations(db: Database, *, company_id: int) -> list[InvitationRow]:
    """Every invitation of the company, newest first (tests and small companies)."""
    return invitation_page(db, company_id=company_id, per_page=100_000).items


def find_invitation(db: Database, *, company_id: int, invitation_id: int) -> InvitationRow | None:
    """One invitation of the company, as its list shows it; another company's reads as missing."""
    items = invitation_page(db, company_id=company_id, invitation_id=invitation_id, per_page=1).items
    return items[0] if items else None


def _state(row, now: str) -> str:
    if row.accepted_at:
        return "accepted"
    if row.revoked_at:
        return "revoked"
    return "expired" if row.expires_at <= now else "open"


@dataclass(frozen=True)
class OpenInvitation:
    id: int
    email: str
    role: str
    programme: str | None
    company_id: int
    company_name: str
    name: str | None  # as the manager pasted it; offered on the accept form


def find_open_invitation(db: Database, token_hash: str) -> tuple[OpenInvitation | None, str | None]:
    """The invitation a token opens (by the token's hash), or None and why not ('unknown', 'used',
    'revoked', 'expired', 'has_account').

    'has_account': the address already has an account (in another company; invite_colleagues does
    not tell the inviting manager so). Only the link's holder, the address's owner, learns it here.
    """
    with db.read() as conn:
        row = (
            conn.execute(
                sa.text(
                    "SELECT i.id, i.email, i.name, i.role, i.programme, i.company_id, c.name AS company_name, "
                    "i.accepted_at, i.revoked_at, i.expires_at, "
                    "EXISTS (SELECT 1 FROM users u WHERE u.email = i.email) AS has_account "
                    "FROM invitations i JOIN companies c ON c.id = i.company_id "
                    "WHERE i.token_hash = :hash"
                ),
                {"hash": token_hash},
            )
            .mappings()
            .first()
        )
    if row is None:
        return None, "unknown"
    if row["accepted_at"] is not None:
        return None, "used"
    if row["revoked_at"] is not None:
        return None, "revoked"
    if row["expires_at"] <= clock.now_iso():
        return None, "expired"
    if row["has_account"]:
        return None, "has_account"
    fields = ("id", "email", "role", "programme", "company_id", "company_name", "name")
    return OpenInvitation(**{k: row[k] for k in fields}), None


def invitation_company(db: Database, invitation_id: int) -> int | None:
    """The company an invitation belongs to (the admin console links an invitation's email there)."""
    with db.read() as conn:
        return conn.execute(
            sa.text("SELECT company_id FROM invitations WHERE id = :id"), {"id": invitation_id}
        ).scalar()
