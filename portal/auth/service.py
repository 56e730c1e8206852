"""Accounts: companies, users, password hashing and sign-in checks."""
from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from flask_login import UserMixin

from portal.db import Database

_hasher = PasswordHasher()
# Verified against when the email is unknown, so both answers take the same time.
_DUMMY_HASH = _hasher.hash("no-such-user-placeholder")
MIN_PASSWORD_LENGTH = 10


class AccountError(ValueError):
    """Bad input for an account operation; the message is safe to show."""


@dataclass(frozen=True)
class User(UserMixin):
    id: int
    email: str
    name: str
    role: str
    company_id: int | None
    company_name: str | None
    programme: str | None

    def get_id(self) -> str:
        return str(self.id)


_USER_COLUMNS = """
    SELECT u.id, u.email, u.name, u.role, u.company_id, c.name AS company_name, u.programme
    FROM users u LEFT JOIN companies c ON c.id = u.company_id
"""


def normalise_email(email: str) -> str:
    return email.strip().lower()


def hash_password(password: str) -> str:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(f"Passwords need at least {MIN_PASSWORD_LENGTH} characters.")
    return _hasher.hash(password)


def load_user(db: Database, user_id: int) -> User | None:
    with db.read() as conn:
        row = conn.execute(sa.text(_USER_COLUMNS + " WHERE u.id = :id"), {"id": user_id}).mappings().first()
    return User(**row) if row else None


def authenticate(db: Database, email: str, password: str) -> User | None:
    """The user if the password matches; None for a wrong password and an unknown email alike."""
    with db.read() as conn:
        row = conn.execute(
            sa.text(_USER_COLUMNS.replace("SELECT", "SELECT u.password_hash,", 1) + " WHERE u.email = :e"),
            {"e": normalise_email(email)},
        ).mappings().first()
    stored_hash = row["password_hash"] if row else _DUMMY_HASH
    try:
        _hasher.verify(stored_hash, password)
    except (VerificationError, InvalidHashError):
        return None
    if row is None:
        return None
    fields = dict(row)
    fields.pop("password_hash")
    return User(**fields)


def ensure_company(conn: sa.Connection, name: str) -> int:
    """The company's ID, creating it if needed; names match case- and space-insensitively."""
    clean = " ".join(name.split())
    if not clean:
        raise AccountError("A company needs a name.")
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
    password: str,
    role: str,
    company_id: int | None,
    name: str = "",
    programme: str | None = None,
) -> int:
    """Insert a user inside the caller's transaction; refuses an address already in use."""
    email = normalise_email(email)
    if "@" not in email:
        raise AccountError("That email address does not look right.")
    taken = conn.execute(sa.text("SELECT 1 FROM users WHERE email = :e"), {"e": email}).first()
    if taken:
        raise AccountError("An account with that email address already exists.")
    return conn.execute(
        sa.text(
            "INSERT INTO users (email, name, password_hash, role, company_id, programme) "
            "VALUES (:email, :name, :hash, :role, :company_id, :programme) RETURNING id"
        ),
        {
            "email": email,
            "name": name.strip(),
            "hash": hash_password(password),
            "role": role,
            "company_id": company_id,
            "programme": programme,
        },
    ).scalar_one()


def create_user(db: Database, *, email: str, password: str, role: str, company: str | None, name: str = "") -> int:
    """Create a login; managers and employees need a company, which is created if needed."""
    if role not in ("admin", "manager", "employee"):
        raise AccountError("Role must be admin, manager or employee.")
    if role != "admin" and not company:
        raise AccountError("Managers and employees belong to a company: give --company.")
    with db.write() as conn:
        company_id = ensure_company(conn, company) if role != "admin" else None
        return insert_user(conn, email=email, password=password, role=role, company_id=company_id, name=name)
