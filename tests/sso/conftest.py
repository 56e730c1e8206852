"""Fixtures for sign-in through a company's provider: the real provider process (conftest.py's
`oidc_provider`), a company set up with it, and a browser's walk through the sign-in."""

from __future__ import annotations

import html
import itertools
import re
from urllib.parse import urlsplit

import pytest

from portal.core import clock
from portal.sso import operations
from tests.pages import csrf_from

CLIENT_ID = "portal-at-acme"
CLIENT_SECRET = "acme-client-secret-value"
_subjects = itertools.count(1)


@pytest.fixture
def set_up_provider(ctx, oidc_provider, make_user, user_id, company_id):
    """set_up_provider(company="Acme Ltd", domains="acme.example", join=None, password_sign_in=True):
    the company's provider settings, saved and approved by an admin as the settings page does."""
    admin_id = user_id(make_user("admin"))

    def set_up(company="Acme Ltd", domains="acme.example", join=None, password_sign_in=True, client_id=CLIENT_ID):
        make_user("manager", company=company)  # the company exists
        operations.save_provider(
            ctx.db,
            ctx.settings,
            company_id=company_id(company),
            issuer=oidc_provider.issuer,
            client_id=client_id,
            client_secret=CLIENT_SECRET,
            domains=domains,
            join_programme=join,
            password_sign_in=password_sign_in,
            acting_user_id=admin_id,
            approve=True,
            now=clock.utcnow(),
        )
        return company_id(company)

    return set_up


@pytest.fixture
def person_at_provider(oidc_provider):
    """person_at_provider(email, name=...): a person at the provider with these claims; returns their subject."""

    def make(email, name="Ada Lovelace", **claims):
        subject = f"subject-{next(_subjects)}"
        oidc_provider.set_user(subject, email=email, name=name, **claims)
        return subject

    return make


def local(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


class ProviderSignIn:
    """A browser (the test client) signing in with an address, through the provider's page."""

    def __init__(self, client, provider):
        self.client = client
        self.provider = provider

    def to_provider(self, email: str) -> str:
        """The address typed on the sign-in page; returns the provider's authorization URL it leads to."""
        token = csrf_from(self.client.get("/login").get_data(as_text=True))
        first = self.client.post("/login", data={"email": email, "csrf_token": token})
        onward = re.search(r'id="to-provider" href="([^"]+)"', first.get_data(as_text=True))
        assert first.status_code == 200 and onward, first.get_data(as_text=True)
        second = self.client.get(html.unescape(onward.group(1)))
        assert second.status_code == 302, second.get_data(as_text=True)
        assert second.location.startswith(self.provider.issuer)
        return second.location

    def back_from_provider(self, authorization_url: str, subject: str | None):
        """The person signs in as `subject` at the provider (denies when None); the portal's answer."""
        return self.client.get(local(self.provider.answer(authorization_url, subject)))

    def sign_in(self, email: str, subject: str | None):
        return self.back_from_provider(self.to_provider(email), subject)


@pytest.fixture
def provider_sign_in(client, oidc_provider):
    return ProviderSignIn(client, oidc_provider)
