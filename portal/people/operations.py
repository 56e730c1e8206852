"""Writing a company's people: a colleague who left is deactivated, one who came back is
reactivated, a volunteer becomes a manager. What a person does here is one of the company's
identity events (portal/sso: the directory's and the provider's are there too), with who did it."""

from __future__ import annotations

import logging

import sqlalchemy as sa

from portal.attendance import end_membership, start_membership
from portal.auth import end_all_sessions
from portal.core import clock
from portal.core.db import Database
from portal.core.i18n import N_
from portal.core.text import InputError
from portal.outbox import cancel_unsent
from portal.outbox.operate import reads
from portal.sso import record_event

log = logging.getLogger(__name__)
LEFT_THE_COMPANY = "recipient_deactivated"  # the cancelled rows' reason


class PeopleError(InputError):
    """The action is refused; the message is safe to show.

    `message` is the catalogue's (English) message (marked with `N_`) and `values` fill its
    placeholders, so a page shows it in its own language; str() is the English sentence."""

    def __init__(self, message: str, **values):
        super().__init__(message % values if values else message)
        self.message, self.values = message, values


def deactivate_colleague(db: Database, *, company_id: int, user_id: int, acting_user_id: int | None) -> str:
    """A colleague left: they cannot sign in any more, and their membership of the company ends now.

    The hours they attended until now stay with the company (their sessions keep their company,
    and company_memberships says when they belonged); sessions after today count for nobody.
    Their open reset links close, and every email to them of which nothing can have gone out is
    cancelled (a report with the company's figures, a campaign), whatever its status: they left. Returns their address.
    `acting_user_id` None: the company's directory (SCIM) deactivated them.
    """
    if user_id == acting_user_id:
        raise PeopleError(N_("You cannot deactivate your own account."))
    now = clock.now_iso()
    with db.write() as conn:
        email = conn.execute(
            sa.text(
                "UPDATE users SET deactivated_at = :now WHERE id = :id AND company_id = :company_id "
                "AND deactivated_at IS NULL RETURNING email"
            ),
            {"id": user_id, "company_id": company_id, "now": now},
        ).scalar()
        if email is None:
            raise PeopleError(N_("That person is not an active member of your company."))
        end_membership(conn, user_id=user_id, at=now)
        conn.execute(
            sa.text("UPDATE password_resets SET used_at = :now WHERE user_id = :id AND used_at IS NULL"),
            {"id": user_id, "now": now},
        )
        end_all_sessions(conn, user_id)
        cancel_unsent(conn, reads.unsettled_ids_for_recipient(conn, email), LEFT_THE_COMPANY, now=clock.parse(now))
        if acting_user_id is not None:  # the directory records its own (scim_deactivated)
            record_event(
                conn, company_id=company_id, event="deactivated", at=now, user_id=user_id, actor_user_id=acting_user_id
            )
    log.info("user %s deactivated by %s", user_id, f"user {acting_user_id}" if acting_user_id else "the directory")
    return email


def reactivate_colleague(db: Database, *, company_id: int, user_id: int, acting_user_id: int | None = None) -> str:
    """A deactivated colleague is back: they can sign in again and belong to the company from now
    (a new membership: the sessions between leaving and coming back count for nobody). The emails
    cancelled when they left stay cancelled. Returns their address. The People page's Reactivate
    and the company's directory (SCIM, `active: true`; `acting_user_id` None, it records its own
    event) both call this."""
    now = clock.now_iso()
    with db.write() as conn:
        email = conn.execute(
            sa.text(
                "UPDATE users SET deactivated_at = NULL WHERE id = :id AND company_id = :company_id "
                "AND deactivated_at IS NOT NULL RETURNING email"
            ),
            {"id": user_id, "company_id": company_id},
        ).scalar()
        if email is None:
            raise PeopleError(N_("That person is not a deactivated member of your company."))
        start_membership(conn, user_id=user_id, company_id=company_id, at=now)
        if acting_user_id is not None:
            record_event(
                conn, company_id=company_id, event="reactivated", at=now, user_id=user_id, actor_user_id=acting_user_id
            )
    log.info("user %s reactivated by %s", user_id, f"user {acting_user_id}" if acting_user_id else "the directory")
    return email


def make_manager(db: Database, *, company_id: int, user_id: int, acting_user_id: int) -> str:
    """An active volunteer of the company becomes one of its managers: from their next page they
    invite colleagues and read the report (the signed-in user is read from the database on every
    request, so no session ends). They keep their programme and their hours. The role is the
    portal's own: the company's directory (SCIM) sends no roles, and a later update from it or a
    sign-in through the company's provider leaves it as it is. Returns their address."""
    now = clock.now_iso()
    with db.write() as conn:
        email = conn.execute(
            sa.text(
                "UPDATE users SET role = 'manager' WHERE id = :id AND company_id = :company_id "
                "AND role = 'employee' AND deactivated_at IS NULL RETURNING email"
            ),
            {"id": user_id, "company_id": company_id},
        ).scalar()
        if email is None:
            raise PeopleError(N_("Only an active volunteer of your company can be made a manager."))
        record_event(
            conn, company_id=company_id, event="made_manager", at=now, user_id=user_id, actor_user_id=acting_user_id
        )
    log.info("user %s made a manager by user %s", user_id, acting_user_id)
    return email
