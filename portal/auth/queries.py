"""Reading accounts: the signed-in user, and checking a password."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.auth.passwords import matches
from portal.core.db import Database
from portal.core.i18n import DEFAULT_LANGUAGE, choose_language
from portal.core.text import normalise_email


@dataclass(frozen=True)
class User:
    """An active account, as Flask-Login's user protocol asks (is_authenticated, is_active,
    is_anonymous, get_id) without inheriting its mixin, so other areas' Flask-free code and the
    worker can load accounts without loading the web framework."""

    is_authenticated = True
    is_active = True  # a deactivated account is never loaded (load_user)
    is_anonymous = False

    id: int
    email: str
    name: str
    role: str
    company_id: int | None
    company_name: str | None
    programme: str | None
    session_generation: int
    language: str | None = None  # their own choice of language; None: their browser's decides
    company_language: str | None = None

    def get_id(self) -> str:
        """What the session stores: the account and the generation it was signed in under."""
        return f"{self.id}:{self.session_generation}"


_USER_COLUMNS = """
    SELECT u.id, u.email, u.name, u.role, u.company_id, c.name AS company_name, u.programme, u.session_generation,
           u.language, c.language AS company_language
    FROM users u LEFT JOIN companies c ON c.id = u.company_id
"""


def load_user(db: Database, user_id: int) -> User | None:
    """The signed-in user; None for a deactivated account, which ends its sessions at once."""
    with db.read() as conn:
        row = (
            conn.execute(sa.text(_USER_COLUMNS + " WHERE u.id = :id AND u.deactivated_at IS NULL"), {"id": user_id})
            .mappings()
            .first()
        )
    return User(**row) if row else None


def load_session_user(db: Database, session_id: str) -> User | None:
    """The user a session belongs to, or None when the session was ended (see end_all_sessions).

    A session from before generations were stored (a bare user ID) counts as ended.
    """
    user_id, _, generation = (session_id or "").partition(":")
    if not (user_id.isascii() and user_id.isdigit() and generation.isascii() and generation.isdigit()):
        return None
    user = load_user(db, int(user_id))
    if user is None or user.session_generation != int(generation):
        return None
    return user


def verify_password(db: Database, user_id: int, password: str) -> bool:
    """Whether the password is the active account's current one."""
    with db.read() as conn:
        stored_hash = conn.execute(
            sa.text("SELECT password_hash FROM users WHERE id = :id AND deactivated_at IS NULL"), {"id": user_id}
        ).scalar()
    return matches(stored_hash, password)


def authenticate(db: Database, email: str, password: str) -> User | None:
    """The user if the password matches; None for a wrong password and an unknown email alike."""
    with db.read() as conn:
        row = (
            conn.execute(
                sa.text(
                    _USER_COLUMNS.replace("SELECT", "SELECT u.password_hash, u.deactivated_at,", 1)
                    + " WHERE u.email = :e"
                ),
                {"e": normalise_email(email)},
            )
            .mappings()
            .first()
        )
    if not matches(row["password_hash"] if row else None, password):
        return None
    if row is None or row["deactivated_at"] is not None:
        return None  # a colleague who left: the same answer as a wrong password
    fields = dict(row)
    fields.pop("password_hash")
    fields.pop("deactivated_at")
    return User(**fields)


def reading_language(conn: sa.Connection, email: str, *, otherwise: str = DEFAULT_LANGUAGE) -> str:
    """The language the portal writes to this address in, inside the caller's transaction: the
    person's own choice, else their company's, else English; `otherwise` for an address with no
    account. An email stores it with its input, so every retry is in the same language."""
    row = conn.execute(
        sa.text(
            "SELECT u.language, c.language AS company_language FROM users u "
            "LEFT JOIN companies c ON c.id = u.company_id WHERE u.email = :email"
        ),
        {"email": normalise_email(email)},
    ).first()
    return choose_language(row.language, (), row.company_language) if row else otherwise
