from __future__ import annotations

import pytest
import sqlalchemy as sa

from portal import create_app
from portal.auth.service import create_user

PASSWORD = "correct-horse-battery"


@pytest.fixture
def app(settings):
    app = create_app({"TESTING": True}, settings=settings)
    yield app
    app.extensions["portal"].db.dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def db(app):
    return app.extensions["portal"].db


@pytest.fixture
def count(db):
    """count(table, where="1=1", **params): rows in a table, read from the test's database."""
    def count(table, where="1=1", **params):
        with db.read() as conn:
            return conn.execute(sa.text(f"SELECT COUNT(*) FROM {table} WHERE {where}"), params).scalar_one()

    return count


@pytest.fixture
def make_user(db):
    """Builder: make_user(role, company=...) creates a login and returns its email."""
    counter = iter(range(1, 10_000))

    def make(role="manager", company="Acme Ltd", email=None, password=PASSWORD):
        email = email or f"{role}{next(counter)}@{company.split()[0].lower() if company else 'teei'}.example"
        create_user(db, email=email, password=password, role=role, company=company if role != "admin" else None)
        return email

    return make


class AuthActions:
    def __init__(self, client):
        self._client = client

    def csrf_token(self, path="/login"):
        import re

        page = self._client.get(path, follow_redirects=True).get_data(as_text=True)
        match = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page) or re.search(
            r'name="csrf_token" value="([^"]+)"', page
        )
        assert match, f"no CSRF token on {path}"
        return match.group(1)

    def login(self, email, password=PASSWORD):
        token = self.csrf_token()
        return self._client.post("/login", data={"email": email, "password": password, "csrf_token": token})

    def logout(self):
        token = self.csrf_token("/")
        return self._client.post("/logout", data={"csrf_token": token})


@pytest.fixture
def auth(client):
    return AuthActions(client)
