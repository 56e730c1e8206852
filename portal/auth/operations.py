"""Writing accounts: companies, users and their password hashes."""

from __future__ import annotations

import sqlalchemy as sa

from portal.attendance import account_created
from portal.auth.passwords import hash_secret
from portal.core import clock
from portal.core.db import Database
from portal.core.i18n import N_
from portal.core.text import InputError, control_characters_in, hidden_characters_in, normalise_email, plain_text

MIN_PASSWORD_LENGTH = 10
ROLES = ("admin", "manager", "employee")


class AccountError(InputError):
    """Bad input for an account operation; the message is safe to show.

    `message` is the catalogue's (English) message and `values` fill its placeholders, so a page
    shows it in its own language; str() is the English sentence (the CLI's)."""

    def __init__(self, message: str, **values):
        super().__init__(message % values if values else message)
        self.message, self.values = message, values


def hash_password(password: str) -> str:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(N_("Passwords need at least %(num)d characters."), num=MIN_PASSWORD_LENGTH)
    return hash_secret(password)


def ensure_company(conn: sa.Connection, name: str) -> int:
    """The company's ID, creating it if needed; names match case- and space-insensitively."""
    clean = " ".join(plain_text(name).split())
    if not clean:
        raise AccountError(N_("A company needs a name."))
    key = clean.lower()
    conn.execute(
        sa.text("INSERT INTO companies (name, name_key) VALUES (:n, :k) ON CONFLICT (name_key) DO NOTHING"),
        {"n": clean, "k": key},
    )
    return conn.execute(sa.text("SELECT id FROM companies WHERE name_key = :k"), {"k": key}).scalar_one()


def insert_user(
    conn: sa.Connection,
    *,
    email: str,
    password_hash: str,
    role: str,
    company_id: int | None,
    name: str = "",
    programme: str | None = None,
) -> int:
    """Insert a user inside the caller's transaction; refuses an address already in use.

    The caller hashes the password (`hash_password`) before it opens its write: a hash is about
    0.1 s of CPU, too long to hold the write lock (the demo seed, hashing inside, held it past a
    libSQL server's 5 s transaction limit on a busy machine).

    The one place a user is inserted: it also starts the user's company membership and attaches
    the attendance sessions stored for the address before the account existed.
    """
    email = normalise_email(email)
    if "@" not in email:
        raise AccountError(N_("That email address does not look right."))
    if control_characters_in(name):
        raise AccountError(N_("Remove the invisible control characters from the name."))
    if hidden_characters_in(name):
        raise AccountError(N_("Remove the invisible characters from the name."))
    taken = conn.execute(sa.text("SELECT 1 FROM users WHERE email = :e"), {"e": email}).first()
    if taken:
        raise AccountError(N_("An account with that email address already exists."))
    user_id = conn.execute(
        sa.text(
            "INSERT INTO users (email, name, password_hash, role, company_id, programme) "
            "VALUES (:email, :name, :hash, :role, :company_id, :programme) RETURNING id"
        ),
        {
            "email": email,
            "name": name.strip(),
            "hash": password_hash,
            "role": role,
            "company_id": company_id,
            "programme": programme,
        },
    ).scalar_one()
    # Every account with a company has a membership from now; attendance that waited for this
    # address counts from this transaction on.
    account_created(conn, user_id=user_id, email=email, company_id=company_id, at=clock.now_iso())
    return user_id


def create_user(db: Database, *, email: str, password: str, role: str, company: str | None, name: str = "") -> int:
    """Create a login; managers and employees need a company, which is created if needed."""
    if role not in ROLES:
        raise AccountError("Role must be admin, manager or employee.")
    if role != "admin" and not company:
        raise AccountError("Managers and employees belong to a company: give --company.")
    if role == "admin" and company:
        raise AccountError("Admins belong to no company: leave out --company.")
    password_hash = hash_password(password)
    with db.write() as conn:
        company_id = ensure_company(conn, company) if role != "admin" else None
        return insert_user(conn, email=email, password_hash=password_hash, role=role, company_id=company_id, name=name)


def end_all_sessions(conn: sa.Connection, user_id: int) -> None:
    """End every session of the account, inside the caller's transaction.

    Sessions are signed cookies, so they cannot be deleted; instead the account's session
    generation moves on and the session loader refuses every cookie signed in under an older one.
    Call it on sign-out and whenever the password changes or is reset.
    """
    conn.execute(
        sa.text("UPDATE users SET session_generation = session_generation + 1 WHERE id = :id"), {"id": user_id}
    )


def sign_out(db: Database, *, user_id: int) -> None:
    """Sign-out: every session of the account ends, on this device and any other."""
    with db.write() as conn:
        end_all_sessions(conn, user_id)
