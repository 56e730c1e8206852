"""A company's managers invited: a second manager by a manager, or a first one again by an admin."""

from __future__ import annotations

import sqlalchemy as sa

from portal.auth import reading_language
from portal.core import clock
from portal.core.i18n import N_, language_or_default
from portal.core.text import normalise_email
from portal.invitations.emails import manager_invitation_email
from portal.invitations.operations import InvitationError, insert_invitation, open_invitation, refuse_while_sending
from portal.outbox import write_then_publish

_ALREADY_A_COLLEAGUE = N_(
    "That colleague already has an account here. Contact TEEI if they should manage your company's volunteering."
)


def invite_manager(
    ctx,
    *,
    company_id: int,
    email: str,
    inviter_id: int,
    inviter_name: str,
    language: str | None = None,
    name: str | None = None,
) -> bool:
    """Invite a person to manage the company (a second manager, or a first one again). Returns queued.
    `name`, when given: kept with the invitation (the email greets them by it, the accept page offers
    it); a renewed invitation keeps the name it had when none is given.

    The email is in the reading language of an address that has an account (its owner's choice,
    else their company's); else in `language`, the inviting person's page language (else English).

    An open or expired invitation to the address is renewed with a new link. A colleague with an
    account in this company is refused (the manager sees them on the people page anyway); an
    address with an account elsewhere is invited like any other, as invite_colleagues does: whether
    it has one is not the manager's to learn, and its owner learns it on the accept page.
    """
    address = normalise_email(email)
    with write_then_publish(ctx, now=clock.utcnow()) as work:
        if work.conn.execute(
            sa.text("SELECT 1 FROM users WHERE email = :e AND company_id = :c"), {"e": address, "c": company_id}
        ).first():
            raise InvitationError(_ALREADY_A_COLLEAGUE)
        existing = work.conn.execute(
            sa.text("SELECT id FROM invitations WHERE company_id = :c AND email = :e AND accepted_at IS NULL"),
            {"c": company_id, "e": address},
        ).scalar()
        if existing is not None:
            refuse_while_sending(work.conn, existing, address)
        company_name = work.conn.execute(
            sa.text("SELECT name FROM companies WHERE id = :id"), {"id": company_id}
        ).scalar_one()
        opened = insert_invitation(
            work.conn,
            ctx.settings,
            company_id=company_id,
            email=address,
            role="manager",
            programme=None,
            invited_by=inviter_id,
            names={address: name} if name else None,
        )
        written_in = reading_language(work.conn, address, otherwise=language_or_default(language))
        work.add(
            manager_invitation_email(
                opened, address, company_name=company_name, inviter_name=inviter_name, language=written_in
            )
        )
    return work.queued


def resend_manager_invitation(
    ctx, *, company_id: int, invitation_id: int, inviter_id: int, inviter_name: str, language: str | None = None
) -> bool:
    """Send a manager's invitation again, with a new link valid for INVITATION_DAYS from now.

    Unlike a volunteer's resend, an expired (or revoked) invitation is renewed: a company whose
    first manager's email bounced or expired must not be locked out. Returns queued. `language`: as
    for invite_manager.
    """
    with ctx.db.read() as conn:
        invitation = open_invitation(conn, invitation_id, company_id, role="manager")
    return invite_manager(
        ctx,
        company_id=company_id,
        email=invitation["email"],
        inviter_id=inviter_id,
        inviter_name=inviter_name,
        language=language,
    )
