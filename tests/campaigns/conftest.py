"""Campaign fixtures: the provider model over HTTP, an admin signed in, a company's people, and
deliveries through the real consumer in this process."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

from portal.campaigns import operations
from portal.outbox.send.consumer import use_context


@pytest.fixture
def settings(settings, provider_model):
    return settings.with_overrides(resend_api_url=provider_model.url, provider_timeout_seconds=5)


@pytest.fixture
def engine_context(ctx):
    use_context(ctx)
    yield ctx
    use_context(None)


@pytest.fixture
def admin(make_user, auth):
    """An admin with a known address (the test sends go to it), signed in on `client`."""
    email = make_user("admin", email="ada@teei.example")
    auth.login(email)
    return email


@pytest.fixture
def people(make_user, company_id):
    """people(n, company=...): n volunteers and one manager of a company; returns (company ID, emails)."""

    def make(volunteers=2, company="Fjord Analytics AS"):
        emails = [make_user("manager", company=company)]
        emails += [make_user("employee", company=company) for _ in range(volunteers)]
        return company_id(company), emails

    return make


@pytest.fixture
def draft(db, user_id):
    """draft(audience, **content): a saved campaign's ID, written by a fresh admin."""

    def make(
        audience,
        name="Winter news",
        subject="News from TEEI",
        body="Hello **everyone**.\n\nSee you soon.",
        topic="programme_news",
    ):
        with db.write() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO users (email, password_hash, role) VALUES ('writer@teei.example', 'x', 'admin') "
                    "ON CONFLICT (email) DO NOTHING"
                )
            )
        return operations.create_campaign(
            db,
            admin_id=user_id("writer@teei.example"),
            name=name,
            subject=subject,
            body=body,
            audience=audience,
            topic=topic,
        )

    return make


@pytest.fixture
def form_token(client):
    """form_token(path): the CSRF token (and request ID, if any) of the first form on a page."""

    def read(path):
        page = client.get(path).get_data(as_text=True)
        token = re.search(r'<input[^>]*name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
        request_id = re.search(r'<input[^>]*name="request_id"[^>]*value="([^"]+)"', page)
        return {"csrf_token": token, **({"request_id": request_id.group(1)} if request_id else {})}

    return read
