"""Writing a company's sign-in: its provider settings, a sign-in sent to the provider and the
answer that comes back, and the identity events that record each."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
from datetime import datetime, timedelta

import sqlalchemy as sa

from portal.auth import AccountError, insert_user
from portal.core import clock
from portal.core.db import Database
from portal.core.i18n import N_
from portal.core.programmes import PROGRAMMES
from portal.core.sealed import SealedValueUnreadable, seal, unseal
from portal.core.settings import Settings
from portal.core.text import InputError, normalise_email
from portal.sso import oidc
from portal.sso.oidc import SignInRefused
from portal.sso.queries import Provider, address_domain, company_provider

log = logging.getLogger(__name__)

CALLBACK_PATH = "/login/sso/callback"
REQUEST_LIFETIME = timedelta(minutes=10)
# An account made by a sign-in through a provider has no password: this is no argon2 hash, so no
# password ever matches it (portal/auth/passwords.py) until its owner sets one by a reset.
NO_PASSWORD = "!provider-sign-in"
# What a user the directory creates over SCIM becomes (portal/scim): an invitation, or an account.
DIRECTORY_CREATES = ("invite", "provision")
_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


class SettingsError(InputError):
    """The settings are refused; `message` is the catalogue's English words (N_), safe to show."""

    def __init__(self, message: str, **values):
        super().__init__(message % values if values else message)
        self.message, self.values = message, values


def record_event(
    conn: sa.Connection,
    *,
    company_id: int,
    event: str,
    at: str,
    user_id: int | None = None,
    actor_user_id: int | None = None,
    reason: str | None = None,
) -> None:
    """One line of the company's identity events (portal/sso/words.py EVENTS names each), in the caller's transaction."""
    conn.execute(
        sa.text(
            "INSERT INTO identity_events (company_id, at, event, user_id, actor_user_id, reason) "
            "VALUES (:company_id, :at, :event, :user_id, :actor, :reason)"
        ),
        {
            "company_id": company_id,
            "at": at,
            "event": event,
            "user_id": user_id,
            "actor": actor_user_id,
            "reason": reason,
        },
    )


def redirect_uri(settings: Settings) -> str:
    """The one redirect URI every company registers at its provider."""
    return settings.public_base_url.rstrip("/") + CALLBACK_PATH


def parse_domains(text: str) -> list[str]:
    domains = sorted({part.strip().lower().lstrip("@") for part in re.split(r"[\s,;]+", text or "") if part.strip()})
    if not domains:
        raise SettingsError(N_("Give at least one email domain the provider vouches for."))
    for domain in domains:
        if not _DOMAIN.match(domain):
            raise SettingsError(N_("%(domain)s is not an email domain."), domain=domain)
    return domains


def save_provider(
    db: Database,
    settings: Settings,
    *,
    company_id: int,
    issuer: str,
    client_id: str,
    client_secret: str | None,
    domains: str,
    join_programme: str | None,
    password_sign_in: bool,
    directory_creates: str = "invite",
    acting_user_id: int,
    approve: bool,
    now: datetime,
) -> None:
    """Save the company's provider. An admin's save (`approve`) is in force at once; a manager's waits
    for an admin's approval, and until then sign-in goes on as before. An empty client secret keeps
    the stored one. The issuer is checked by its discovery document before anything is written."""
    issuer = issuer.strip()
    client_id = client_id.strip()
    if not oidc.issuer_allowed(issuer, development=not settings.is_deployed):
        raise SettingsError(N_("The issuer must be an https:// address."))
    if join_programme is not None and join_programme not in PROGRAMMES:
        raise SettingsError(N_("Choose one of the programmes offered."))
    if directory_creates not in DIRECTORY_CREATES:
        raise SettingsError(N_("Choose what a user created by the directory becomes."))
    if directory_creates == "provision" and join_programme is None:
        raise SettingsError(N_("To give the directory's new users an account at once, choose their programme above."))
    domain_list = parse_domains(domains)
    current = company_provider(db, company_id)
    if not client_secret and current is None:
        raise SettingsError(N_("Enter the client secret."))
    try:
        oidc.discover(issuer)
    except SignInRefused as refused:
        if refused.reason == "wrong_issuer":
            raise SettingsError(
                N_(
                    "The provider at that address names another issuer: copy the issuer exactly as its discovery document gives it."
                )
            ) from None
        raise SettingsError(N_("The portal could not read the provider's discovery document at that issuer.")) from None
    sealed = seal(settings.secret_key, client_secret) if client_secret else current.client_secret_sealed
    at = clock.iso(now)
    with db.write() as conn:
        taken = conn.execute(
            sa.text(
                "SELECT domain FROM company_sign_in_domains WHERE company_id != :company_id "
                "AND domain IN (SELECT value FROM json_each(:domains))"
            ),
            {"company_id": company_id, "domains": _json_list(domain_list)},
        ).scalar()
        if taken:
            raise SettingsError(N_("%(domain)s is already another company's domain."), domain=taken)
        conn.execute(
            sa.text(
                """
                INSERT INTO company_identity_providers
                    (company_id, issuer, client_id, client_secret_sealed, join_programme, password_sign_in,
                     directory_creates, approved_at, approved_by, updated_at, updated_by)
                VALUES (:company_id, :issuer, :client_id, :sealed, :join, :password, :directory_creates, :approved_at, :approved_by, :at, :actor)
                ON CONFLICT (company_id) DO UPDATE SET
                    issuer = excluded.issuer, client_id = excluded.client_id,
                    client_secret_sealed = excluded.client_secret_sealed, join_programme = excluded.join_programme,
                    password_sign_in = excluded.password_sign_in, directory_creates = excluded.directory_creates,
                    approved_at = excluded.approved_at,
                    approved_by = excluded.approved_by, updated_at = excluded.updated_at, updated_by = excluded.updated_by
                """
            ),
            {
                "company_id": company_id,
                "issuer": issuer,
                "client_id": client_id,
                "sealed": sealed,
                "join": join_programme,
                "password": int(password_sign_in),
                "directory_creates": directory_creates,
                "approved_at": at if approve else None,
                "approved_by": acting_user_id if approve else None,
                "at": at,
                "actor": acting_user_id,
            },
        )
        conn.execute(sa.text("DELETE FROM company_sign_in_domains WHERE company_id = :id"), {"id": company_id})
        conn.execute(
            sa.text(
                "INSERT INTO company_sign_in_domains (domain, company_id) SELECT value, :id FROM json_each(:domains)"
            ),
            {"id": company_id, "domains": _json_list(domain_list)},
        )
        record_event(conn, company_id=company_id, event="settings_saved", at=at, actor_user_id=acting_user_id)
        if approve:
            record_event(conn, company_id=company_id, event="settings_approved", at=at, actor_user_id=acting_user_id)


def approve_provider(db: Database, *, company_id: int, acting_user_id: int, now: datetime) -> bool:
    """An admin approves the settings a manager saved; False when there were none waiting."""
    at = clock.iso(now)
    with db.write() as conn:
        approved = conn.execute(
            sa.text(
                "UPDATE company_identity_providers SET approved_at = :at, approved_by = :actor "
                "WHERE company_id = :id AND approved_at IS NULL"
            ),
            {"at": at, "actor": acting_user_id, "id": company_id},
        ).rowcount
        if approved:
            record_event(conn, company_id=company_id, event="settings_approved", at=at, actor_user_id=acting_user_id)
    return bool(approved)


def _json_list(values: list[str]) -> str:
    return json.dumps(values)


def _state_hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def start_sign_in(db: Database, settings: Settings, provider: Provider, *, now: datetime) -> tuple[str, str]:
    """Send a person to the company's provider: (the authorization URL, the state the browser keeps).

    The nonce and PKCE verifier stay on the server, under the state's hash, for REQUEST_LIFETIME."""
    discovery = oidc.discover(provider.issuer)
    state, nonce, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(32), secrets.token_urlsafe(48)
    with db.write() as conn:
        conn.execute(
            sa.text("DELETE FROM sign_in_requests WHERE created_at < :old"), {"old": clock.iso(now - timedelta(days=1))}
        )
        conn.execute(
            sa.text(
                "INSERT INTO sign_in_requests (state_hash, company_id, nonce, code_verifier, created_at) "
                "VALUES (:hash, :company_id, :nonce, :verifier, :now)"
            ),
            {
                "hash": _state_hash(state),
                "company_id": provider.company_id,
                "nonce": nonce,
                "verifier": verifier,
                "now": clock.iso(now),
            },
        )
    url = oidc.authorization_url(
        discovery,
        client_id=provider.client_id,
        redirect_uri=redirect_uri(settings),
        state=state,
        nonce=nonce,
        code_verifier=verifier,
    )
    return url, state


def finish_sign_in(
    db: Database,
    settings: Settings,
    *,
    state: str,
    browser_state: str | None,
    code: str | None,
    error: str | None,
    now: datetime,
) -> int:
    """The provider's answer: the ID of the account it signs in, or SignInRefused with the reason.

    The state is used once (a replay finds it used) and must be the one this browser was given. Each
    answer for a known company, signed in or refused, is one of its identity events."""
    if error and not state:
        # Some providers leave the state out of an error answer (RFC 6749 asks for it). An error signs
        # nobody in, so it may close this browser's own pending sign-in, to say what happened.
        state = browser_state or ""
    if not state or not browser_state or not secrets.compare_digest(state, browser_state):
        raise SignInRefused("state_unknown")
    with db.write() as conn:
        request = conn.execute(
            sa.text(
                "UPDATE sign_in_requests SET used_at = :now WHERE state_hash = :hash AND used_at IS NULL "
                "RETURNING company_id, nonce, code_verifier, created_at"
            ),
            {"now": clock.iso(now), "hash": _state_hash(state)},
        ).first()
    if request is None:
        raise SignInRefused("state_unknown")
    try:
        if clock.parse(request.created_at) + REQUEST_LIFETIME < now:
            raise SignInRefused("request_expired")
        if error:
            raise SignInRefused("denied" if error == "access_denied" else "provider_error")
        if not code:
            raise SignInRefused("provider_error")
        return _signed_in(db, settings, request, code=code, now=now)
    except SignInRefused as refused:
        with db.write() as conn:
            record_event(
                conn, company_id=request.company_id, event="sso_refused", at=clock.iso(now), reason=refused.reason
            )
        raise


def _signed_in(db: Database, settings: Settings, request, *, code: str, now: datetime) -> int:
    provider = company_provider(db, request.company_id)
    if provider is None or not provider.approved:
        raise SignInRefused("not_configured")
    try:
        client_secret = unseal(settings.secret_key, provider.client_secret_sealed)
    except SealedValueUnreadable:
        log.error("company %s: the stored client secret cannot be read under this SECRET_KEY", provider.company_id)
        raise SignInRefused("token_refused") from None
    discovery = oidc.discover(provider.issuer)
    id_token = oidc.exchange_code(
        discovery,
        client_id=provider.client_id,
        client_secret=client_secret,
        redirect_uri=redirect_uri(settings),
        code=code,
        code_verifier=request.code_verifier,
    )
    claims = oidc.check_id_token(
        id_token,
        keys=oidc.provider_keys(discovery),
        issuer=provider.issuer,
        client_id=provider.client_id,
        nonce=request.nonce,
        now=now,
    )
    return link_identity(db, provider, claims, now=now)


def link_identity(db: Database, provider: Provider, claims: dict, *, now: datetime) -> int:
    """The account a checked ID token names (docs/design.md, "How identities map to accounts"):

    1. the account linked to (issuer, sub) at an earlier sign-in, whatever the address is now;
    2. else the account with the token's address, when the provider vouches for its domain and the
       account belongs to this company (then linked);
    3. else, when the company lets colleagues join, a new volunteer of the company (then linked);
    otherwise refused. A deactivated account is refused whichever way it was found."""
    at = clock.iso(now)
    subject = str(claims["sub"])
    with db.write() as conn:
        user_id = conn.execute(
            sa.text("SELECT user_id FROM identity_links WHERE issuer = :issuer AND subject = :subject"),
            {"issuer": provider.issuer, "subject": subject},
        ).scalar()
        event = "sso_sign_in"
        if user_id is None:
            email = _claimed_email(claims)
            if address_domain(email) not in provider.domains:
                raise SignInRefused("domain_not_vouched")
            account = conn.execute(
                sa.text("SELECT id, company_id FROM users WHERE email = :email"), {"email": email}
            ).first()
            if account is not None and account.company_id != provider.company_id:
                raise SignInRefused("other_company")
            if account is not None:
                user_id = account.id
            elif provider.join_programme is None:
                raise SignInRefused("no_account")
            else:
                user_id = _join(conn, provider, email=email, name=str(claims.get("name") or ""))
                event = "sso_joined"
            conn.execute(
                sa.text(
                    "INSERT INTO identity_links (issuer, subject, user_id, company_id, created_at) "
                    "VALUES (:issuer, :subject, :user_id, :company_id, :at)"
                ),
                {
                    "issuer": provider.issuer,
                    "subject": subject,
                    "user_id": user_id,
                    "company_id": provider.company_id,
                    "at": at,
                },
            )
        account = conn.execute(
            sa.text("SELECT company_id, deactivated_at FROM users WHERE id = :id"), {"id": user_id}
        ).one()
        if account.company_id != provider.company_id:
            raise SignInRefused("other_company")
        if account.deactivated_at is not None:
            raise SignInRefused("deactivated")
        record_event(conn, company_id=provider.company_id, event=event, at=at, user_id=user_id)
    return user_id


def _claimed_email(claims: dict) -> str:
    """The address the provider vouches for: `email`, else Entra ID's `preferred_username` (the UPN)
    when it is an address. An `email_verified` of false is refused; Entra ID and many others send none."""
    if claims.get("email_verified") is False:
        raise SignInRefused("email_unverified")
    for claim in ("email", "preferred_username"):
        value = claims.get(claim)
        if isinstance(value, str) and "@" in value and len(value) <= 254:
            return normalise_email(value)
    raise SignInRefused("no_email")


def _join(conn: sa.Connection, provider: Provider, *, email: str, name: str) -> int:
    try:
        return insert_user(
            conn,
            email=email,
            name=name[:200],
            password_hash=NO_PASSWORD,
            role="employee",
            company_id=provider.company_id,
            programme=provider.join_programme,
        )
    except AccountError:
        # a name with characters the portal refuses: the account starts without one
        return insert_user(
            conn,
            email=email,
            name="",
            password_hash=NO_PASSWORD,
            role="employee",
            company_id=provider.company_id,
            programme=provider.join_programme,
        )
