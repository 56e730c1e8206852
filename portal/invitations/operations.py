"""Writing invitations: invite colleagues, send one again, accept one.

Each operation is one write holding the invitation rows and their emails, which commit together
and are published after the commit: a `write_then_publish` block, or for inviting colleagues one
write given whole (`write_steps_then_publish`: one request on a libSQL server, where a block
costs one per statement), whose statements decide in SQL what the block decided between them.

A refusal's message is in English, marked for the catalogue (`N_`): a page shows it in its own
language from `InvitationError.message` and `.values` (portal.web.forms.error_message).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

import sqlalchemy as sa

from portal.auth import AccountError, hash_password, insert_user
from portal.core import clock
from portal.core.db import Database, json_array, json_rows
from portal.core.driver import Statement, Steps
from portal.core.i18n import ENGLISH, N_
from portal.core.programmes import PROGRAMMES
from portal.core.settings import Settings
from portal.core.text import InputError, one_line
from portal.invitations import tokens
from portal.invitations.addresses import MAX_ADDRESSES, MAX_NAME_LENGTH
from portal.invitations.emails import OPENED_INVITATION, invitation_email, invitation_subject, opening_email
from portal.outbox import write_steps_then_publish, write_then_publish
from portal.outbox.ground.statuses import SETTLED
from portal.outbox.operate import reads

INVITATION_DAYS = 14


class InvitationError(InputError):
    """Bad input or a state that refuses the action; the message is safe to show.

    `message` is the catalogue's (English) message and `values` fill its placeholders, so a page
    shows it in its own language; str() is the English sentence."""

    def __init__(self, message: str, **values):
        super().__init__(message % values if values else message)
        self.message, self.values = message, values


# one_line's refusals of the name typed on the accept page (portal/core/text.py words them; marked
# here so the page can show them in its language).
_NAME_REFUSALS = (
    N_("Remove the invisible control characters from your name."),
    N_("Remove the characters that change the text's direction from your name."),
    N_("Enter your name."),
    N_("Keep your name under 120 characters."),
)


class OpenedInvitation(NamedTuple):
    id: int
    token_nonce: str
    send_number: int  # the email intent's key includes it, so a resend is a new intent
    expires_at: str
    name: str | None = None  # as pasted with the address, if it was

    @property
    def expires_on(self) -> str:
        """The expiry as the email states it."""
        return clock.display_date(self.expires_at)


_UPSERT_INVITATIONS_WHERE = """
    INSERT INTO invitations (company_id, email, name, department, role, programme, token_nonce, token_hash,
                             invited_by, expires_at, created_at)
    SELECT :company_id, r.value ->> '$.email', r.value ->> '$.name', r.value ->> '$.department', :role, :programme,
           r.value ->> '$.nonce', r.value ->> '$.hash', :invited_by, :expires, :now
    FROM json_each(:rows) AS r
    WHERE {guard}
    ON CONFLICT (company_id, email) DO UPDATE
      SET name = COALESCE(excluded.name, invitations.name),
          department = COALESCE(excluded.department, invitations.department), token_nonce = excluded.token_nonce, token_hash = excluded.token_hash,
          role = excluded.role, programme = excluded.programme, invited_by = excluded.invited_by,
          expires_at = excluded.expires_at, send_count = invitations.send_count + 1, revoked_at = NULL
      WHERE invitations.accepted_at IS NULL
    """
_UPSERT_INVITATIONS = sa.text(_UPSERT_INVITATIONS_WHERE.format(guard="true"))
_OPEN_INVITATIONS = sa.text(
    "SELECT id, email, name, token_nonce, send_count, expires_at FROM invitations WHERE company_id = :company_id "
    "AND accepted_at IS NULL AND email IN (SELECT value FROM json_each(:emails))"
)


def insert_invitations(
    conn: sa.Connection,
    settings: Settings,
    *,
    company_id: int,
    emails: list[str],
    role: str,
    programme: str | None,
    invited_by: int | None,
    names: dict[str, str] | None = None,
) -> dict[str, OpenedInvitation]:
    """Create, or renew unaccepted, invitation rows inside the caller's transaction.

    Returns {email: OpenedInvitation} for each address that is now open; an address whose
    invitation was already accepted is left out. The caller adds the emails, keyed on the send number.
    """
    if not emails:
        return {}
    now = clock.utcnow()
    expires, created = clock.iso(now + timedelta(days=INVITATION_DAYS)), clock.iso(now)
    rows = [_new_link(settings, email, (names or {}).get(email)) for email in emails]
    conn.execute(
        _UPSERT_INVITATIONS,
        {
            "rows": json_rows(rows),
            "company_id": company_id,
            "role": role,
            "programme": programme,
            "invited_by": invited_by,
            "expires": expires,
            "now": created,
        },
    )
    found = conn.execute(_OPEN_INVITATIONS, {"emails": json_array(emails), "company_id": company_id})
    return {
        row.email: OpenedInvitation(row.id, row.token_nonce, row.send_count, row.expires_at, row.name) for row in found
    }


def insert_invitation(conn: sa.Connection, settings: Settings, *, email: str, **fields) -> OpenedInvitation:
    """One invitation (see insert_invitations); refuses an address that already accepted."""
    opened = insert_invitations(conn, settings, emails=[email], **fields)
    if email not in opened:
        raise InvitationError(N_("%(email)s has already accepted an invitation."), email=email)
    return opened[email]


@dataclass(frozen=True)
class InviteResult:
    invited: tuple[str, ...]  # new (or renewed expired) invitations, emailed now
    already_invited: tuple[str, ...]  # a live invitation exists: nothing new is sent
    already_members: tuple[str, ...]  # the address already has an account in the manager's company
    queued: bool


# Only the manager's own company: whether an address has an account elsewhere is not theirs to
# learn, so such an address is invited like any other (its owner learns on the accept page).
_IS_MEMBER = "SELECT 1 FROM users WHERE company_id = :company_id AND email = {address}"
_IS_LIVE = (
    "SELECT 1 FROM invitations WHERE company_id = :company_id AND email = {address} AND accepted_at IS NULL "
    "AND revoked_at IS NULL AND expires_at > :now"
)
_ADDRESS = "r.value ->> '$.email'"
_IN_LIST = "address.value FROM json_each(:emails) AS address WHERE EXISTS"
_MEMBERS_SQL = f"SELECT {_IN_LIST} ({_IS_MEMBER.format(address='address.value')})"
_LIVE_SQL = f"SELECT {_IN_LIST} ({_IS_LIVE.format(address='address.value')})"
_COMPANY_MEMBERS = Statement(_MEMBERS_SQL)
_LIVE_INVITATIONS = Statement(_LIVE_SQL)
# Opens (or renews) an invitation for each address that has no account in the company and no live
# invitation, as the reads before it in the same write find them: the decision is the statement's.
_OPEN_UNLESS_MEMBER_OR_LIVE = Statement(
    _UPSERT_INVITATIONS_WHERE.format(
        guard=f"NOT EXISTS ({_IS_MEMBER.format(address=_ADDRESS)}) AND NOT EXISTS ({_IS_LIVE.format(address=_ADDRESS)})"
    )
)
_OPENED_NOW = Statement(
    "SELECT email FROM invitations WHERE token_nonce IN (SELECT value ->> '$.nonce' FROM json_each(:rows))"
)


def standing_of(db: Database, *, company_id: int, addresses: list[str], now: datetime) -> tuple[set, set]:
    """(addresses with an account in the company, addresses with a live invitation): what an import's
    preview says will be left alone, by the same rules invite_colleagues applies when it writes."""
    found = {"emails": json_array(addresses), "company_id": company_id, "now": clock.iso(now)}
    with db.read() as conn:
        members = set(conn.execute(sa.text(_MEMBERS_SQL), found).scalars())
        live = set(conn.execute(sa.text(_LIVE_SQL), found).scalars())
    return members, live - members


def invite_colleagues(
    ctx,
    *,
    manager,
    addresses: list[str],
    programme: str,
    names: dict[str, str] | None = None,
    language: str = ENGLISH,
    departments: dict[str, str] | None = None,
) -> InviteResult:
    """Invite addresses (already parsed) to the manager's company: one write given whole, then publish.

    names: {address: name} for addresses pasted with a name; kept with the invitation.
    departments: {address: department} from a CSV import; kept with the invitation, then the account.
    language: the emails' language, as the manager chose it (the invite form; default: their page's).
    """
    if programme not in PROGRAMMES:
        raise InvitationError(N_("Choose TEEI Language or TEEI Mentorship."))
    if not addresses:
        raise InvitationError(N_("Add at least one email address."))
    if len(addresses) > MAX_ADDRESSES:
        raise InvitationError(N_("Invite at most %(num)d people at a time."), num=MAX_ADDRESSES)
    now = clock.utcnow()
    expires = clock.iso(now + timedelta(days=INVITATION_DAYS))
    # Every address gets a new link and an email, written only if its invitation is opened now.
    links = [
        _new_link(ctx.settings, address, (names or {}).get(address), (departments or {}).get(address))
        for address in addresses
    ]
    emails = [
        opening_email(
            OpenedInvitation(None, link["nonce"], 1, expires, link["name"]), link["email"], programme, manager, language
        )
        for link in links
    ]
    found = {"emails": json_array(addresses), "company_id": manager.company_id, "now": clock.iso(now)}
    steps = Steps()
    steps.add("members", _COMPANY_MEMBERS, found)
    steps.add("live", _LIVE_INVITATIONS, found)
    steps.add(
        "opened",
        _OPEN_UNLESS_MEMBER_OR_LIVE,
        {
            **found,
            "rows": json_rows(links),
            "role": "employee",
            "programme": programme,
            "invited_by": manager.id,
            "expires": expires,
        },
    )
    opened = Steps()
    opened.add("opened_now", _OPENED_NOW, {"rows": json_rows(links)})
    written = write_steps_then_publish(ctx, steps, emails, now=now, written_with=OPENED_INVITATION, reads=opened)
    members = set(written["members"].scalars())
    live = set(written["live"].scalars())
    invited = set(written["opened_now"].scalars())
    return InviteResult(
        invited=tuple(a for a in addresses if a in invited),
        already_invited=tuple(a for a in addresses if a in live and a not in members),
        already_members=tuple(a for a in addresses if a in members),
        queued=written.queued,
    )


def _new_link(settings: Settings, address: str, name: str | None, department: str | None = None) -> dict:
    """A new link for one address, as the invitation stores it (the nonce, the token's hash)."""
    nonce = tokens.new_nonce()
    return {
        "email": address,
        "name": name or None,
        "department": department or None,
        "nonce": nonce,
        "hash": tokens.token_hash(tokens.token_for(settings.secret_key, nonce)),
    }


_INVITATION = sa.text(
    "SELECT id, email, name, programme, token_nonce, accepted_at, revoked_at, expires_at, role "
    "FROM invitations WHERE id = :id AND company_id = :company_id"
)


def open_invitation(conn: sa.Connection, invitation_id: int, company_id: int, *, role: str):
    """The company's invitation of this role that nobody accepted yet, as a mapping; an
    InvitationError for any other (another company's reads as missing)."""
    invitation = conn.execute(_INVITATION, {"id": invitation_id, "company_id": company_id}).mappings().first()
    if invitation is None or invitation["role"] != role:
        raise InvitationError(N_("That invitation does not exist."))
    if invitation["accepted_at"] is not None:
        raise InvitationError(N_("%(email)s has already accepted."), email=invitation["email"])
    return invitation


def resend_invitation(ctx, *, manager, invitation_id: int, language: str = ENGLISH) -> bool:
    """Send an open invitation again; only once its latest email has settled. Returns queued.

    language: the email's (the resending manager's page language: the first email's language is
    not kept with the invitation)."""
    with write_then_publish(ctx, now=clock.utcnow()) as work:
        invitation = open_invitation(work.conn, invitation_id, manager.company_id, role="employee")
        if invitation["revoked_at"] is not None:
            raise InvitationError(N_("That invitation was revoked; invite the address again for a new link."))
        if invitation["expires_at"] <= clock.iso(work.now):
            raise InvitationError(N_("That invitation has expired; invite the address again for a new link."))
        refuse_while_sending(work.conn, invitation_id, invitation["email"])
        send_number = work.conn.execute(
            sa.text("UPDATE invitations SET send_count = send_count + 1 WHERE id = :id RETURNING send_count"),
            {"id": invitation_id},
        ).scalar_one()
        opened = OpenedInvitation(
            invitation_id, invitation["token_nonce"], send_number, invitation["expires_at"], invitation["name"]
        )
        work.add(invitation_email(opened, invitation["email"], invitation["programme"], manager, language))
    return work.queued


def accept_invitation(db: Database, *, token_hash: str, name: str, password: str) -> int:
    """Create the invited person's account and use up the link (by its token's hash), in one
    transaction; return the user ID."""
    name = one_line(name, "your name", MAX_NAME_LENGTH, InvitationError)
    try:
        password_hash = hash_password(password)
    except AccountError as error:
        raise _from_account_error(error) from None
    now = clock.now_iso()
    with db.write() as conn:
        # Single use: only one acceptance can change the row, however many arrive at once.
        invitation = (
            conn.execute(
                sa.text(
                    "UPDATE invitations SET accepted_at = :now WHERE token_hash = :hash AND accepted_at IS NULL "
                    "AND revoked_at IS NULL AND expires_at > :now RETURNING id, email, role, programme, company_id, department"
                ),
                {"hash": token_hash, "now": now},
            )
            .mappings()
            .first()
        )
        if invitation is None:
            raise InvitationError(N_("This invitation link is no longer valid."))
        try:
            user_id = insert_user(
                conn,
                email=invitation["email"],
                password_hash=password_hash,
                role=invitation["role"],
                company_id=invitation["company_id"],
                name=name,
                programme=invitation["programme"],
            )
        except AccountError as error:
            raise _from_account_error(error) from None
        conn.execute(
            sa.text("UPDATE invitations SET accepted_user_id = :u WHERE id = :id"),
            {"u": user_id, "id": invitation["id"]},
        )
        if invitation["department"]:
            conn.execute(
                sa.text("UPDATE users SET department = :department WHERE id = :u"),
                {"department": invitation["department"], "u": user_id},
            )
    return user_id


def _from_account_error(error: AccountError) -> InvitationError:
    """An account's refusal as the invitation's, keeping its catalogue message and values."""
    message = getattr(error, "message", None)
    if isinstance(message, str):
        return InvitationError(message, **(getattr(error, "values", None) or {}))
    return InvitationError(str(error))


def refuse_while_sending(conn: sa.Connection, invitation_id: int, email: str) -> None:
    """A resend waits until the latest email has settled, so two are never in flight at once."""
    latest = reads.latest_status(conn, invitation_subject(invitation_id))
    if latest is not None and latest not in SETTLED:
        raise InvitationError(
            N_("The email to %(email)s is still being sent; resend it once it has gone out."), email=email
        )


def revoke_invitation(db: Database, *, company_id: int, invitation_id: int) -> str:
    """Take back an invitation that was not accepted: its link stops working. Returns its address.

    Inviting the address again later opens it anew, with a new link.
    """
    with db.write() as conn:
        email = conn.execute(
            sa.text(
                "UPDATE invitations SET revoked_at = :now WHERE id = :id AND company_id = :company_id "
                "AND accepted_at IS NULL AND revoked_at IS NULL RETURNING email"
            ),
            {"id": invitation_id, "company_id": company_id, "now": clock.now_iso()},
        ).scalar()
        if email is None:
            state = conn.execute(
                sa.text("SELECT accepted_at IS NOT NULL FROM invitations WHERE id = :id AND company_id = :company_id"),
                {"id": invitation_id, "company_id": company_id},
            ).first()
            if state is None:
                raise InvitationError(N_("That invitation does not exist."))
            raise InvitationError(
                N_("That invitation was already accepted, so it cannot be revoked.")
                if state[0]
                else N_("That invitation was already revoked.")
            )
    return email
