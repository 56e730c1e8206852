"""Fixtures for SCIM: a company with a token, and its directory speaking HTTP to the live portal."""

from __future__ import annotations

import httpx
import pytest

from portal.core import clock
from portal.scim import create_token
from portal.sso.operations import save_provider


@pytest.fixture
def scim_company(ctx, make_user, company_id, oidc_provider, user_id):
    """scim_company(name, domain, creates): the company (made with a manager), whose colleagues join
    TEEI Language and whose directory's new users get `creates` ('provision' unless told: most tests
    here are of accounts; tests/scim/test_invite_mode.py asks for 'invite'); returns (company ID, a
    new SCIM token)."""

    def make(name="Acme Ltd", domain="acme.example", creates="provision"):
        make_user("manager", company=name, email=f"boss@{domain}")
        company = company_id(name)
        save_provider(
            ctx.db,
            ctx.settings,
            company_id=company,
            issuer=oidc_provider.issuer,
            client_id="portal",
            client_secret="secret",
            domains=domain,
            join_programme="language",
            password_sign_in=True,
            directory_creates=creates,
            acting_user_id=user_id(f"boss@{domain}"),
            approve=True,
            now=clock.utcnow(),
        )
        return company, create_token(ctx.db, company_id=company, acting_user_id=None, now=clock.utcnow())

    return make


@pytest.fixture
def directory(live_portal):
    """directory(token): an HTTP client at the live portal's /scim/v2 with that bearer token (None: none)."""
    clients = []

    def make(token):
        client = httpx.Client(
            base_url=f"{live_portal}/scim/v2",
            headers={
                "Content-Type": "application/scim+json",
                **({"Authorization": f"Bearer {token}"} if token else {}),
            },
            timeout=10,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
