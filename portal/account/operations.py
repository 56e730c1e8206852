"""Writing accounts as their owners do: reset a forgotten password, change name and password.

Each operation is one transaction. A changed password closes every open reset link and ends the
account's other sessions (`end_all_sessions`).

A refusal's message is in English, marked for the catalogue (`N_`): a page shows it in its own
language from the error's `message` and `values`. A reset email is written in the language of the
page the person asked on, stored with their request until the worker's pass answers it.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import sqlalchemy as sa

from portal.account import tokens
from portal.account.emails import password_reset_email
from portal.auth import MIN_PASSWORD_LENGTH, AccountError, end_all_sessions, hash_password, verify_password
from portal.core import clock
from portal.core.db import Database
from portal.core.i18n import ENGLISH, N_, language_or_default
from portal.core.text import InputError, normalise_email, one_line
from portal.outbox import PeriodicTask, write_then_publish

log = logging.getLogger(__name__)

RESET_MINUTES = 60
# At most this many reset emails to one address an hour, whoever asks: the form's answer is the
# same either way, so nobody can flood an inbox through it (the per-client limit is in routes.py).
RESETS_PER_ADDRESS_PER_HOUR = 3
NAME_MAX = 120


class PasswordResetError(InputError):
    """The link cannot reset a password (used, expired, unknown) or the password is refused.

    `message` is the catalogue's (English) message and `values` fill its placeholders."""

    def __init__(self, message: str, **values):
        super().__init__(message % values if values else message)
        self.message, self.values = message, values


_ACTIVE_USER = sa.text("SELECT id, name FROM users WHERE email = :email AND deactivated_at IS NULL")
_RECENT_RESETS = sa.text("SELECT COUNT(*) FROM password_resets WHERE user_id = :user_id AND created_at > :since")
_CLOSE_OPEN_RESETS = sa.text("UPDATE password_resets SET used_at = :now WHERE user_id = :user_id AND used_at IS NULL")
_INSERT_RESET = sa.text(
    """
    INSERT INTO password_resets (user_id, token_nonce, token_hash, created_at, expires_at)
    VALUES (:user_id, :nonce, :hash, :now, :expires) RETURNING id
    """
)


_ASK = sa.text("INSERT INTO password_reset_requests (address, asked_at, language) VALUES (:address, :now, :language)")
_WAITING_REQUESTS = sa.text("SELECT id, address, language FROM password_reset_requests ORDER BY id LIMIT :limit")
_FORGET_REQUEST = sa.text("DELETE FROM password_reset_requests WHERE id = :id")
REQUESTS_PER_PASS = 100
RESET_PASS_SECONDS = 2


def ask_for_password_reset(db: Database, *, email: str, now: datetime, language: str = ENGLISH) -> None:
    """What the forgot-password form does, for every address alike: one small insert. `language` is
    the page's: the email the request leads to is written in it.

    Whether the address has an account is looked at later, by the worker's pass
    (`send_requested_reset_links`): done here, an unknown address would answer sooner than a known
    one (no reset to write, no email to publish), and the timing would tell a stranger who has an
    account. The answer the person reads is the same either way.
    """
    with db.write() as conn:
        conn.execute(
            _ASK, {"address": normalise_email(email), "now": clock.iso(now), "language": language_or_default(language)}
        )


def send_requested_reset_links(ctx, *, now: datetime) -> int:
    """The worker's pass: a link for each waiting request whose address has an active account.

    Each request is one transaction that writes the reset and its email and deletes the request, so
    a request is answered once even if two passes overlap; returns how many requests were handled.
    """
    with ctx.db.read() as conn:
        waiting = conn.execute(_WAITING_REQUESTS, {"limit": REQUESTS_PER_PASS}).all()
    for request in waiting:
        with write_then_publish(ctx, now=now) as work:
            if work.conn.execute(_FORGET_REQUEST, {"id": request.id}).rowcount:
                _write_reset_link(
                    ctx, work, address=request.address, language=language_or_default(request.language), now=now
                )
    return len(waiting)


def password_reset_task(settings) -> PeriodicTask:
    """The pass as the worker runs it, one worker at a time."""

    def one_pass(ctx, now: datetime) -> None:
        handled = send_requested_reset_links(ctx, now=now)
        if handled:
            log.info("password reset pass handled %d request(s)", handled)

    return PeriodicTask("password-resets", RESET_PASS_SECONDS, one_pass)


def _write_reset_link(ctx, work, *, address: str, language: str, now: datetime) -> None:
    """Inside the caller's transaction: a new link (closing the older ones) and its email, if the
    address has an active account and has not had too many links this hour."""
    user = work.conn.execute(_ACTIVE_USER, {"email": address}).first()
    if user is None:
        return
    recent = work.conn.execute(
        _RECENT_RESETS, {"user_id": user.id, "since": clock.iso(now - timedelta(hours=1))}
    ).scalar_one()
    if recent >= RESETS_PER_ADDRESS_PER_HOUR:
        log.info("password reset for user %s skipped: %s links in the last hour", user.id, recent)
        return
    work.conn.execute(_CLOSE_OPEN_RESETS, {"user_id": user.id, "now": clock.iso(now)})
    nonce = tokens.new_nonce()
    reset_id = work.conn.execute(
        _INSERT_RESET,
        {
            "user_id": user.id,
            "nonce": nonce,
            "hash": tokens.token_hash(tokens.token_for(ctx.settings.secret_key, nonce)),
            "now": clock.iso(now),
            "expires": clock.iso(now + timedelta(minutes=RESET_MINUTES)),
        },
    ).scalar_one()
    work.add(
        password_reset_email(
            reset_id, address=address, name=user.name, token_nonce=nonce, minutes=RESET_MINUTES, language=language
        )
    )
    log.info("password reset %s recorded for user %s", reset_id, user.id)


def reset_password(db: Database, *, token_hash: str, password: str) -> int:
    """Set a new password with a reset link, using the link up; return the user's ID."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise PasswordResetError(N_("Use at least %(num)d characters."), num=MIN_PASSWORD_LENGTH)
    new_hash = hash_password(password)
    now = clock.now_iso()
    with db.write() as conn:
        # Single use: of two submissions at once, only one changes the row.
        user_id = conn.execute(
            sa.text(
                "UPDATE password_resets SET used_at = :now WHERE token_hash = :hash AND used_at IS NULL "
                "AND expires_at > :now AND user_id IN (SELECT id FROM users WHERE deactivated_at IS NULL) "
                "RETURNING user_id"
            ),
            {"hash": token_hash, "now": now},
        ).scalar()
        if user_id is None:
            raise PasswordResetError(N_("This reset link is no longer valid. Ask for a new one."))
        _set_password(conn, user_id, new_hash, now)
    return user_id


class WrongCurrentPassword(AccountError):
    """A guess at the current password: counted and slowed down like a failed sign-in."""


def update_account(
    db: Database, *, user_id: int, name: str, current_password: str = "", new_password: str = ""
) -> bool:
    """Change the account's name and, when a new password is given, its password; return whether
    the password changed. The current password must match before a new one is set."""
    clean_name = one_line(name, "your name", NAME_MAX, AccountError)
    new_hash = None
    if new_password:
        if not current_password or not verify_password(db, user_id, current_password):
            raise WrongCurrentPassword(N_("Your current password is not right, so the password was not changed."))
        new_hash = hash_password(new_password)
    now = clock.now_iso()
    with db.write() as conn:
        conn.execute(sa.text("UPDATE users SET name = :name WHERE id = :id"), {"name": clean_name, "id": user_id})
        if new_hash is not None:
            _set_password(conn, user_id, new_hash, now)
    return new_hash is not None


def _set_password(conn: sa.Connection, user_id: int, new_hash: str, now: str) -> None:
    conn.execute(sa.text("UPDATE users SET password_hash = :h WHERE id = :id"), {"h": new_hash, "id": user_id})
    conn.execute(_CLOSE_OPEN_RESETS, {"user_id": user_id, "now": now})
    end_all_sessions(conn, user_id)


def set_language(db: Database, *, user_id: int, language: str) -> None:
    """A person's own choice of language, for their pages and the email the portal writes to them."""
    with db.write() as conn:
        conn.execute(
            sa.text("UPDATE users SET language = :language WHERE id = :id"), {"id": user_id, "language": language}
        )
