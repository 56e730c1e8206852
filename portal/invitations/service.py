"""Invitations: a manager invites colleagues; an invited person accepts and gets an account.

Every write here opens its own transaction and adds the email intents inside it; publication
happens after the commit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple
from datetime import timedelta

import sqlalchemy as sa
from email_validator import EmailNotValidError, validate_email

from portal.auth.service import AccountError, insert_user
from portal.db import Database, json_array
from portal.outbox import EmailIntent, PublishResult, add_outbox_rows, publish_outbox_rows
from portal.outbox import clock
from portal.outbox.families.invitation import PROGRAMMES
from portal.outbox import statuses
from portal.outbox.statuses import SETTLED
from portal.settings import Settings
from portal import tokens

INVITATION_DAYS = 14
MAX_ADDRESSES = 500
_SEPARATORS = re.compile(r"[,;\s]+")


class InvitationError(ValueError):
    """Bad input or a state that refuses the action; the message is safe to show."""


@dataclass
class ParsedAddresses:
    valid: list[str] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)   # (as typed, why)


def parse_addresses(text: str) -> ParsedAddresses:
    """Addresses from commas, semicolons, new lines or a pasted spreadsheet column.

    Trimmed, lower-cased for comparison and de-duplicated, in the order first seen.
    """
    parsed, seen = ParsedAddresses(), set()
    for raw in _SEPARATORS.split(text or ""):
        candidate = raw.strip().strip("\"'<>").strip()
        if not candidate:
            continue
        try:
            address = validate_email(candidate, check_deliverability=False).normalized.lower()
        except EmailNotValidError as error:
            parsed.invalid.append((candidate, str(error)))
            continue
        if address not in seen:
            seen.add(address)
            parsed.valid.append(address)
    return parsed


_UPSERT_INVITATION = sa.text(
    """
    INSERT INTO invitations (company_id, email, role, programme, token_nonce, token_hash, invited_by,
                             expires_at, created_at)
    VALUES (:company_id, :email, :role, :programme, :nonce, :hash, :invited_by, :expires, :now)
    ON CONFLICT (company_id, email) DO UPDATE
      SET token_nonce = excluded.token_nonce, token_hash = excluded.token_hash,
          role = excluded.role, programme = excluded.programme, invited_by = excluded.invited_by,
          expires_at = excluded.expires_at, send_count = invitations.send_count + 1
      WHERE invitations.accepted_at IS NULL
    """
)

_OPEN_INVITATIONS = sa.text(
    "SELECT id, email, token_nonce, send_count, expires_at FROM invitations WHERE company_id = :company_id "
    "AND accepted_at IS NULL AND email IN (SELECT value FROM json_each(:emails))"
)
_EXISTING_USERS = sa.text("SELECT email FROM users WHERE email IN (SELECT value FROM json_each(:emails))")
_LIVE_INVITATIONS = sa.text(
    "SELECT email FROM invitations WHERE company_id = :company_id AND accepted_at IS NULL AND expires_at > :now "
    "AND email IN (SELECT value FROM json_each(:emails))"
)


class OpenedInvitation(NamedTuple):
    id: int
    token_nonce: str
    send_number: int     # the email intent's key includes it, so a resend is a new intent
    expires_at: str

    @property
    def expires_on(self) -> str:
        """The expiry as the email states it."""
        return clock.parse(self.expires_at).strftime("%d %B %Y")


def insert_invitations(
    conn: sa.Connection,
    settings: Settings,
    *,
    company_id: int,
    emails: list[str],
    role: str,
    programme: str | None,
    invited_by: int | None,
) -> dict[str, "OpenedInvitation"]:
    """Create, or renew unaccepted, invitation rows inside the caller's transaction.

    Returns {email: OpenedInvitation} for each address that is now open;
    an address whose invitation was already accepted is left out. The caller adds the email intents,
    keyed on the send number.
    """
    now = clock.utcnow()
    expires, created = clock.iso(now + timedelta(days=INVITATION_DAYS)), clock.iso(now)
    rows = []
    for email in emails:
        nonce = tokens.new_nonce()
        rows.append({"company_id": company_id, "email": email, "role": role, "programme": programme,
                     "nonce": nonce, "hash": tokens.token_hash(tokens.token_for(settings.secret_key, nonce)),
                     "invited_by": invited_by, "expires": expires, "now": created})
    if not rows:
        return {}
    conn.execute(_UPSERT_INVITATION, rows)
    opened = {}
    for row in conn.execute(_OPEN_INVITATIONS, {"emails": json_array(emails), "company_id": company_id}):
        opened[row.email] = OpenedInvitation(row.id, row.token_nonce, row.send_count, row.expires_at)
    return opened


def insert_invitation(
    conn: sa.Connection,
    settings: Settings,
    *,
    company_id: int,
    email: str,
    role: str,
    programme: str | None,
    invited_by: int | None,
) -> OpenedInvitation:
    """One invitation (see insert_invitations); refuses an address that already accepted."""
    opened = insert_invitations(conn, settings, company_id=company_id, emails=[email], role=role,
                                programme=programme, invited_by=invited_by)
    if email not in opened:
        raise InvitationError(f"{email} has already accepted an invitation.")
    return opened[email]


@dataclass(frozen=True)
class InviteResult:
    invited: tuple[str, ...]            # new (or renewed expired) invitations, emailed now
    already_invited: tuple[str, ...]    # a live invitation exists: nothing new is sent
    already_members: tuple[str, ...]    # the address already has an account
    queued: bool


def invite_colleagues(
    db: Database, redis, settings: Settings, *, manager, addresses: list[str], programme: str
) -> InviteResult:
    """Invite addresses (already parsed) to the manager's company: one transaction, then publish."""
    if programme not in PROGRAMMES:
        raise InvitationError("Choose TEEI Language or TEEI Mentorship.")
    if not addresses:
        raise InvitationError("Add at least one email address.")
    if len(addresses) > MAX_ADDRESSES:
        raise InvitationError(f"Invite at most {MAX_ADDRESSES} people at a time.")
    now = clock.now_iso()
    invited, live, members = [], [], []
    with db.write() as conn:
        emails = json_array(addresses)
        existing_users = set(conn.execute(_EXISTING_USERS, {"emails": emails}).scalars())
        live_invitations = set(conn.execute(
            _LIVE_INVITATIONS, {"emails": emails, "company_id": manager.company_id, "now": now}).scalars())
        for address in addresses:
            if address in existing_users:
                members.append(address)
            elif address in live_invitations:
                live.append(address)
            else:
                invited.append(address)
        opened = insert_invitations(conn, settings, company_id=manager.company_id, emails=invited,
                                    role="employee", programme=programme, invited_by=manager.id)
        intents = [_invitation_email(opened[address], address, programme, manager) for address in invited]
        ids = add_outbox_rows(conn, intents, settings)
    result = publish_outbox_rows(db, redis, ids) if ids else PublishResult(queued=True, outbox_ids=())
    return InviteResult(tuple(invited), tuple(live), tuple(members), result.queued)


def _invitation_email(invitation: OpenedInvitation, address: str, programme: str, manager) -> EmailIntent:
    return EmailIntent(
        family="invitation",
        recipient=address,
        # A resend is a new send number, so a new intent with its own key.
        idempotency_key=f"invitation:{invitation.id}:send:{invitation.send_number}",
        subject_ref=f"invitation:{invitation.id}",
        data={
            "company_name": manager.company_name,
            "inviter_name": manager.name or "A colleague",
            "programme": programme,
            "token_nonce": invitation.token_nonce,
            "expires_on": invitation.expires_on,
        },
    )


def resend_invitation(db: Database, redis, settings: Settings, *, manager, invitation_id: int) -> bool:
    """Send an open invitation again; only once its latest email has settled. Returns queued."""
    with db.write() as conn:
        invitation = conn.execute(
            sa.text("SELECT id, email, programme, token_nonce, send_count, accepted_at, expires_at, role "
                    "FROM invitations WHERE id = :id AND company_id = :company_id"),
            {"id": invitation_id, "company_id": manager.company_id},
        ).mappings().first()
        if invitation is None or invitation["role"] != "employee":
            raise InvitationError("That invitation does not exist.")
        if invitation["accepted_at"] is not None:
            raise InvitationError(f"{invitation['email']} has already accepted.")
        if invitation["expires_at"] <= clock.now_iso():
            raise InvitationError("That invitation has expired; invite the address again for a new link.")
        latest = _latest_email_status(conn, invitation_id)
        if latest is not None and latest not in SETTLED:
            raise InvitationError(f"The email to {invitation['email']} is still being sent; resend it once it has gone out.")
        send_number = conn.execute(
            sa.text("UPDATE invitations SET send_count = send_count + 1 WHERE id = :id RETURNING send_count"),
            {"id": invitation_id},
        ).scalar_one()
        opened = OpenedInvitation(invitation_id, invitation["token_nonce"], send_number, invitation["expires_at"])
        intent = _invitation_email(opened, invitation["email"], invitation["programme"], manager)
        ids = add_outbox_rows(conn, [intent], settings)
    return publish_outbox_rows(db, redis, ids).queued


def _latest_email_status(conn, invitation_id: int) -> str | None:
    return conn.execute(
        sa.text("SELECT status FROM email_outbox WHERE subject_ref = :ref ORDER BY created_at DESC, rowid DESC LIMIT 1"),
        {"ref": f"invitation:{invitation_id}"},
    ).scalar()


# How a manager reads an email's state.
EMAIL_STATE_WORDS = {
    **{status: "queued" for status in statuses.UNSETTLED},
    statuses.SENT: "sent", statuses.DELIVERED: "delivered", statuses.BOUNCED: "bounced",
    statuses.COMPLAINED: "marked as spam", statuses.SUPPRESSED: "blocked: the address bounced before",
    statuses.FAILED: "failed", statuses.DEAD_LETTER: "needs attention",
}
assert set(EMAIL_STATE_WORDS) == set(statuses.ALL)
EMAIL_STATE_TONE = {"delivered": "ok", "sent": "ok", "bounced": "bad", "marked as spam": "bad", "failed": "bad",
                    "blocked: the address bounced before": "bad", "needs attention": "warn", "queued": ""}


@dataclass(frozen=True)
class InvitationView:
    id: int
    email: str
    programme: str
    state: str          # open, accepted, expired
    email_state: str    # in a manager's words
    created_at: str
    can_resend: bool

    @property
    def programme_name(self) -> str:
        return PROGRAMMES.get(self.programme, "")

    @property
    def email_tone(self) -> str:
        return EMAIL_STATE_TONE.get(self.email_state, "")


def list_invitations(db: Database, *, company_id: int) -> list[InvitationView]:
    now = clock.now_iso()
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                """
                SELECT i.id, i.email, i.programme, i.accepted_at, i.expires_at, i.created_at,
                       (SELECT o.status FROM email_outbox o WHERE o.subject_ref = 'invitation:' || i.id
                        ORDER BY o.created_at DESC, o.rowid DESC LIMIT 1) AS email_status
                FROM invitations i
                WHERE i.company_id = :company_id AND i.role = 'employee'
                ORDER BY i.created_at DESC, i.id DESC
                """
            ),
            {"company_id": company_id},
        ).mappings()
        views = []
        for row in rows:
            state = "accepted" if row["accepted_at"] else ("expired" if row["expires_at"] <= now else "open")
            status = row["email_status"]
            views.append(InvitationView(
                id=row["id"], email=row["email"], programme=row["programme"], state=state,
                email_state=EMAIL_STATE_WORDS.get(status, "not sent"), created_at=row["created_at"],
                can_resend=state == "open" and (status is None or status in SETTLED),
            ))
        return views


@dataclass(frozen=True)
class OpenInvitation:
    id: int
    email: str
    role: str
    programme: str | None
    company_id: int
    company_name: str


def find_open_invitation(db: Database, token: str) -> tuple[OpenInvitation | None, str | None]:
    """The invitation a token opens, or None and why not ('unknown', 'used', 'expired')."""
    with db.read() as conn:
        row = conn.execute(
            sa.text("SELECT i.id, i.email, i.role, i.programme, i.company_id, c.name AS company_name, "
                    "i.accepted_at, i.expires_at FROM invitations i JOIN companies c ON c.id = i.company_id "
                    "WHERE i.token_hash = :hash"),
            {"hash": tokens.token_hash(token)},
        ).mappings().first()
    if row is None:
        return None, "unknown"
    if row["accepted_at"] is not None:
        return None, "used"
    if row["expires_at"] <= clock.now_iso():
        return None, "expired"
    return OpenInvitation(**{k: row[k] for k in ("id", "email", "role", "programme", "company_id", "company_name")}), None


def accept_invitation(db: Database, *, token: str, name: str, password: str) -> int:
    """Create the invited person's account and use up the token, in one transaction; return the user ID."""
    if not name.strip():
        raise InvitationError("Tell us your name.")
    now = clock.now_iso()
    with db.write() as conn:
        # Single use: only one acceptance can change the row, however many arrive at once.
        invitation = conn.execute(
            sa.text("UPDATE invitations SET accepted_at = :now WHERE token_hash = :hash AND accepted_at IS NULL "
                    "AND expires_at > :now RETURNING id, email, role, programme, company_id"),
            {"hash": tokens.token_hash(token), "now": now},
        ).mappings().first()
        if invitation is None:
            raise InvitationError("This invitation link is no longer valid.")
        try:
            user_id = insert_user(conn, email=invitation["email"], password=password, role=invitation["role"],
                                  company_id=invitation["company_id"], name=name, programme=invitation["programme"])
        except AccountError as error:
            raise InvitationError(str(error)) from None
        conn.execute(sa.text("UPDATE invitations SET accepted_user_id = :u WHERE id = :id"),
                     {"u": user_id, "id": invitation["id"]})
    return user_id
