"""Writing what the company's directory sends over SCIM: tokens, and its people.

A User the directory creates becomes what the company's sign-in settings choose (directory_creates):
- 'invite' (the default): the invitation the Invitations page sends, to the settings' programme for
  colleagues who join, else the first programme; the person makes their account by accepting it.
  Until then `active: false` and DELETE revoke the invitation; after, they act on the account.
- 'provision': a volunteer account of the company at once (with no password: they sign in through
  the company's provider), in the programme the settings choose for colleagues who join.
`active: false` and DELETE of an account are the People page's deactivation (portal/people: signed
out at once, membership ended, hours kept, unsent emails cancelled).
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime
from typing import NamedTuple

import sqlalchemy as sa

from portal.auth import AccountError, insert_user
from portal.core import clock
from portal.core.db import Database
from portal.core.programmes import PROGRAMMES
from portal.invitations import InvitationError, invite_colleagues, revoke_invitation
from portal.people import PeopleError, deactivate_colleague, reactivate_colleague
from portal.scim.queries import token_hash
from portal.scim.resources import Fields
from portal.sso import NO_PASSWORD, directory_creates, join_programme, record_event

log = logging.getLogger(__name__)
TOKEN_PREFIX = "scim_"


class ScimRefused(Exception):
    """An RFC 7644 error answer: HTTP status, scimType (or None) and a detail safe to show."""

    def __init__(self, status: int, detail: str, scim_type: str | None = None):
        super().__init__(detail)
        self.status, self.detail, self.scim_type = status, detail, scim_type


def create_token(db: Database, *, company_id: int, acting_user_id: int | None, now: datetime) -> str:
    """A new bearer token for the company's directory; only its hash is stored, so this is its one showing."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    at = clock.iso(now)
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO scim_tokens (company_id, token_hash, created_at, created_by) VALUES (:c, :h, :at, :by)"
            ),
            {"c": company_id, "h": token_hash(token), "at": at, "by": acting_user_id},
        )
        record_event(conn, company_id=company_id, event="token_created", at=at, actor_user_id=acting_user_id)
    return token


def revoke_tokens(db: Database, *, company_id: int, acting_user_id: int | None, now: datetime) -> int:
    """Every live token of the company stops working now; how many there were."""
    at = clock.iso(now)
    with db.write() as conn:
        revoked = conn.execute(
            sa.text("UPDATE scim_tokens SET revoked_at = :at WHERE company_id = :c AND revoked_at IS NULL"),
            {"at": at, "c": company_id},
        ).rowcount
        if revoked:
            record_event(conn, company_id=company_id, event="token_revoked", at=at, actor_user_id=acting_user_id)
    return revoked


def _taken(conn: sa.Connection, email: str, *, other_than: int | None = None) -> bool:
    return (
        conn.execute(
            sa.text("SELECT 1 FROM users WHERE email = :e AND id IS NOT :id"), {"e": email, "id": other_than}
        ).first()
        is not None
    )


class _Directory(NamedTuple):
    """The inviter of an invitation the directory sends: the company, no person (the email names
    "a colleague", as for a manager without a name)."""

    company_id: int
    company_name: str
    id: None = None
    name: None = None


def create_person(ctx, *, company_id: int, fields: Fields, now: datetime) -> str:
    """The new User's SCIM id: an invitation's ('inv-…') or an account's, as the company chose."""
    if directory_creates(ctx.db, company_id) == "invite":
        return invite_person(ctx, company_id=company_id, fields=fields, now=now)
    return str(_provision(ctx.db, company_id=company_id, fields=fields, now=now))


def invite_person(ctx, *, company_id: int, fields: Fields, now: datetime, again: bool = False) -> str:
    """Invite the person as the Invitations page does (one email; a manager's live invitation is
    adopted, not sent again), then mark the invitation as the directory's. An inactive User is not
    invited; an address the directory already has (an account, or its own invitation unless it is
    inviting `again` a User it revoked) is a 409."""
    if not fields.active:
        raise ScimRefused(
            400,
            "The company's directory invites the users it creates; an inactive user cannot be invited.",
            "invalidValue",
        )
    with ctx.db.read() as conn:
        if _taken(conn, fields.email) or (not again and _invited_by_directory(conn, company_id, fields.email)):
            raise ScimRefused(409, "A user with this userName already exists.", "uniqueness")
        company_name = conn.execute(sa.text("SELECT name FROM companies WHERE id = :id"), {"id": company_id}).scalar()
    programme = join_programme(ctx.db, company_id) or next(iter(PROGRAMMES))
    result = invite_colleagues(
        ctx,
        manager=_Directory(company_id, company_name),
        addresses=[fields.email],
        programme=programme,
        names={fields.email: fields.name} if fields.name else None,
        departments={fields.email: fields.department} if fields.department else None,
    )
    if result.already_members:
        raise ScimRefused(409, "A user with this userName already exists.", "uniqueness")
    at = clock.iso(now)
    with ctx.db.write() as conn:
        invitation_id = conn.execute(
            sa.text(
                "UPDATE invitations SET scim_created_at = :at, scim_deleted_at = NULL, name = COALESCE(:name, name), "
                "department = COALESCE(:department, department) "
                "WHERE company_id = :c AND email = :e AND accepted_at IS NULL RETURNING id"
            ),
            {"at": at, "c": company_id, "e": fields.email, "name": fields.name, "department": fields.department},
        ).scalar()
        if invitation_id is None:
            raise ScimRefused(409, "A user with this userName already exists.", "uniqueness")
        record_event(conn, company_id=company_id, event="scim_invited", at=at)
    return f"inv-{invitation_id}"


def _invited_by_directory(conn: sa.Connection, company_id: int, email: str) -> bool:
    """The directory already has this address as a User: an invitation of its own, open or revoked."""
    return (
        conn.execute(
            sa.text(
                "SELECT 1 FROM invitations WHERE company_id = :c AND email = :e AND scim_created_at IS NOT NULL "
                "AND accepted_at IS NULL AND scim_deleted_at IS NULL"
            ),
            {"c": company_id, "e": email},
        ).first()
        is not None
    )


def _provision(db: Database, *, company_id: int, fields: Fields, now: datetime) -> int:
    programme = join_programme(db, company_id)
    if programme is None:
        raise ScimRefused(
            400,
            "The company's sign-in settings choose no programme for colleagues who join, so the directory "
            "cannot provision them: choose one on the portal's Sign-in page.",
            "invalidValue",
        )
    at = clock.iso(now)
    with db.write() as conn:
        if _taken(conn, fields.email):
            raise ScimRefused(409, "A user with this userName already exists.", "uniqueness")
        try:
            user_id = insert_user(
                conn,
                email=fields.email,
                name=fields.name,
                password_hash=NO_PASSWORD,
                role="employee",
                company_id=company_id,
                programme=programme,
            )
        except AccountError as error:
            raise ScimRefused(400, str(error), "invalidValue") from None
        _store(conn, user_id, fields, at)
        record_event(conn, company_id=company_id, event="scim_created", at=at, user_id=user_id)
    if not fields.active:
        _deactivate(db, company_id=company_id, user_id=user_id, now=now)
    return user_id


def _store(conn: sa.Connection, user_id: int, fields: Fields, at: str) -> None:
    conn.execute(
        sa.text(
            "UPDATE users SET email = :email, name = :name, department = :department, employee_number = :number, "
            "scim_external_id = :external, scim_updated_at = :at WHERE id = :id"
        ),
        {
            "email": fields.email,
            "name": fields.name,
            "department": fields.department,
            "number": fields.employee_number,
            "external": fields.external_id,
            "at": at,
            "id": user_id,
        },
    )


def replace_person(
    db: Database, *, company_id: int, user_id: int, fields: Fields, was_active: bool, now: datetime
) -> None:
    """PUT and PATCH: the User as the directory now sees them. `active` going false deactivates as the
    People page does; going true again reactivates (portal/people reactivate_colleague)."""
    at = clock.iso(now)
    with db.write() as conn:
        if _taken(conn, fields.email, other_than=user_id):
            raise ScimRefused(409, "A user with this userName already exists.", "uniqueness")
        _store(conn, user_id, fields, at)
        record_event(conn, company_id=company_id, event="scim_updated", at=at, user_id=user_id)
    if was_active and not fields.active:
        _deactivate(db, company_id=company_id, user_id=user_id, now=now)
    elif fields.active and not was_active:
        try:
            reactivate_colleague(db, company_id=company_id, user_id=user_id)
        except PeopleError:
            return
        with db.write() as conn:
            record_event(conn, company_id=company_id, event="scim_reactivated", at=at, user_id=user_id)


def replace_invited(
    ctx, *, company_id: int, invitation_id: int, email: str, fields: Fields, was_active: bool, now: datetime
) -> None:
    """PUT and PATCH of a person invited and not yet accepted: their name and department go with the
    invitation (and to the account when they accept); `active` going false revokes the invitation,
    going true invites them again (a new link and email). The address changes only by inviting anew."""
    if fields.email != email:
        raise ScimRefused(
            400, "An invited user's userName cannot change before they accept; delete and create them.", "mutability"
        )
    at = clock.iso(now)
    with ctx.db.write() as conn:
        conn.execute(
            sa.text(
                "UPDATE invitations SET name = :name, department = :department, scim_created_at = :at WHERE id = :id"
            ),
            {"name": fields.name, "department": fields.department, "at": at, "id": invitation_id},
        )
        record_event(conn, company_id=company_id, event="scim_updated", at=at)
    if was_active and not fields.active:
        _revoke(ctx.db, company_id=company_id, invitation_id=invitation_id, now=now)
    elif fields.active and not was_active:
        invite_person(ctx, company_id=company_id, fields=fields, now=now, again=True)


def delete_invited(db: Database, *, company_id: int, invitation_id: int, was_active: bool, now: datetime) -> None:
    """DELETE of a person invited and not yet accepted: the invitation is revoked; 404 from now."""
    if was_active:
        _revoke(db, company_id=company_id, invitation_id=invitation_id, now=now)
    with db.write() as conn:
        conn.execute(
            sa.text("UPDATE invitations SET scim_deleted_at = :at WHERE id = :id"),
            {"at": clock.iso(now), "id": invitation_id},
        )


def _revoke(db: Database, *, company_id: int, invitation_id: int, now: datetime) -> None:
    try:
        revoke_invitation(db, company_id=company_id, invitation_id=invitation_id)
    except InvitationError:
        return  # accepted or revoked meanwhile: the account's own answers apply from now
    with db.write() as conn:
        record_event(conn, company_id=company_id, event="scim_invitation_revoked", at=clock.iso(now))


def delete_person(db: Database, *, company_id: int, user_id: int, was_active: bool, now: datetime) -> None:
    """DELETE: the People page's deactivation; the directory no longer sees them (404 from now)."""
    if was_active:
        _deactivate(db, company_id=company_id, user_id=user_id, now=now)
    with db.write() as conn:
        conn.execute(
            sa.text("UPDATE users SET scim_deleted_at = :at WHERE id = :id"), {"at": clock.iso(now), "id": user_id}
        )


def _deactivate(db: Database, *, company_id: int, user_id: int, now: datetime) -> None:
    try:
        deactivate_colleague(db, company_id=company_id, user_id=user_id, acting_user_id=None)
    except PeopleError:
        return  # already deactivated: nothing more to do
    with db.write() as conn:
        record_event(conn, company_id=company_id, event="scim_deactivated", at=clock.iso(now), user_id=user_id)
