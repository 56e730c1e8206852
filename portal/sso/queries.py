"""Reading a company's sign-in: its provider, the domains it vouches for, and its identity events."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.core.db import Database
from portal.core.text import normalise_email
from portal.sso.words import EVENTS, REASONS


@dataclass(frozen=True)
class Provider:
    company_id: int
    company_name: str
    issuer: str
    client_id: str
    client_secret_sealed: str
    join_programme: str | None
    password_sign_in: bool
    directory_creates: str  # 'invite' or 'provision': what a user the directory creates over SCIM becomes
    approved_at: str | None
    updated_at: str
    domains: tuple[str, ...]

    @property
    def approved(self) -> bool:
        return self.approved_at is not None


@dataclass(frozen=True)
class IdentityEvent:
    at: str
    event: str
    reason: str | None
    person: str | None
    actor: str | None

    @property
    def words(self) -> str:
        return EVENTS[self.event]

    @property
    def reason_words(self) -> str | None:
        return REASONS.get(self.reason) if self.reason else None


_PROVIDER = """
    SELECT p.company_id, c.name AS company_name, p.issuer, p.client_id, p.client_secret_sealed, p.join_programme,
           p.password_sign_in, p.directory_creates, p.approved_at, p.updated_at
    FROM company_identity_providers p JOIN companies c ON c.id = p.company_id
"""


def _provider(conn: sa.Connection, where: str, params: dict) -> Provider | None:
    row = conn.execute(sa.text(_PROVIDER + " WHERE " + where), params).mappings().first()
    if row is None:
        return None
    domains = conn.execute(
        sa.text("SELECT domain FROM company_sign_in_domains WHERE company_id = :id ORDER BY domain"),
        {"id": row["company_id"]},
    ).scalars()
    return Provider(**{**row, "password_sign_in": bool(row["password_sign_in"])}, domains=tuple(domains))


def company_name(db: Database, company_id: int) -> str | None:
    with db.read() as conn:
        return conn.execute(sa.text("SELECT name FROM companies WHERE id = :id"), {"id": company_id}).scalar()


def company_provider(db: Database, company_id: int) -> Provider | None:
    """The company's provider settings, approved or not."""
    with db.read() as conn:
        return _provider(conn, "p.company_id = :id", {"id": company_id})


def address_domain(email: str) -> str:
    return normalise_email(email).rpartition("@")[2]


def provider_for_address(db: Database, email: str) -> Provider | None:
    """The approved provider that vouches for this address's domain, if any: where its owner signs in.

    Decided by the domain alone, never by whether the address has an account, so the answer tells
    nobody who has one."""
    return provider_for_domain(db, address_domain(email))


def provider_for_domain(db: Database, domain: str) -> Provider | None:
    if not domain:
        return None
    with db.read() as conn:
        return _provider(
            conn,
            "p.approved_at IS NOT NULL AND p.company_id = "
            "(SELECT company_id FROM company_sign_in_domains WHERE domain = :domain)",
            {"domain": domain},
        )


def password_sign_in_allowed(db: Database, company_id: int | None) -> bool:
    """False only for a company whose approved provider settings switch password sign-in off."""
    if company_id is None:
        return True
    with db.read() as conn:
        off = conn.execute(
            sa.text(
                "SELECT 1 FROM company_identity_providers WHERE company_id = :id "
                "AND approved_at IS NOT NULL AND password_sign_in = 0"
            ),
            {"id": company_id},
        ).first()
    return off is None


def join_programme(db: Database, company_id: int) -> str | None:
    """The programme a colleague without an account joins (by the provider or the directory), or None."""
    with db.read() as conn:
        return conn.execute(
            sa.text("SELECT join_programme FROM company_identity_providers WHERE company_id = :id"), {"id": company_id}
        ).scalar()


def directory_creates(db: Database, company_id: int) -> str:
    """What a user the company's directory creates over SCIM becomes: 'invite' (also for a company
    without sign-in settings) or 'provision'."""
    with db.read() as conn:
        chosen = conn.execute(
            sa.text("SELECT directory_creates FROM company_identity_providers WHERE company_id = :id"),
            {"id": company_id},
        ).scalar()
    return chosen or "invite"


def identity_events(db: Database, company_id: int, *, limit: int = 200) -> list[IdentityEvent]:
    """The company's identity events, newest first: what its managers and TEEI's admins read."""
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT e.at, e.event, e.reason, COALESCE(NULLIF(u.name, ''), u.email) AS person, "
                "COALESCE(NULLIF(a.name, ''), a.email) AS actor "
                "FROM identity_events e LEFT JOIN users u ON u.id = e.user_id LEFT JOIN users a ON a.id = e.actor_user_id "
                "WHERE e.company_id = :company_id ORDER BY e.at DESC, e.id DESC LIMIT :limit"
            ),
            {"company_id": company_id, "limit": limit},
        ).mappings()
        return [IdentityEvent(**row) for row in rows]


def providers_awaiting_approval(db: Database) -> list[Provider]:
    with db.read() as conn:
        ids = conn.execute(
            sa.text("SELECT company_id FROM company_identity_providers WHERE approved_at IS NULL ORDER BY updated_at")
        ).scalars()
        return [_provider(conn, "p.company_id = :id", {"id": company_id}) for company_id in list(ids)]
