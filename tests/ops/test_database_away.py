"""When the database server goes away, every page says so (503), nothing is half-written, and the
portal comes back by itself when the server does: against a real libSQL server (sqld)."""

from __future__ import annotations

import pytest

from devtools.sqld import SqldServer, copy_data
from portal import create_app
from portal.auth.operations import create_user
from portal.core.db import Database
from portal.web.extensions import EXTENSION_KEY
from tests.conftest import AuthActions
from tests.pages import csrf_from

MANAGER = "manager@away.example"


@pytest.fixture
def server(tmp_path, sqld_template, sqld_keys):
    running = SqldServer(copy_data(sqld_template, tmp_path / "data"), sqld_keys).start()
    yield running
    running.stop()


@pytest.fixture
def portal(server, settings):
    db = Database(server.database_url())
    create_user(db, email=MANAGER, password="correct-horse-battery", role="manager", company="Away Ltd")
    db.dispose()
    app = create_app({"TESTING": True}, settings=settings.with_overrides(database_url=server.database_url()))
    yield app
    app.extensions[EXTENSION_KEY].db.dispose()


def test_pages_say_the_database_is_away_and_recover_when_it_returns(portal, server):
    client = portal.test_client()
    assert AuthActions(client).login(MANAGER).status_code == 302
    assert client.get("/reports").status_code == 200
    token = csrf_from(client.get("/invitations/new").get_data(as_text=True))

    server.stop()
    for path in ("/reports", "/invitations", "/people"):
        page = client.get(path)
        assert page.status_code == 503, path
        text = page.get_data(as_text=True)
        assert "The database is unavailable" in text and "Traceback" not in text
        assert page.headers["Retry-After"] == "30"
    health = client.get("/healthz")
    assert health.status_code == 503 and health.get_json()["checks"] == {"database": "unavailable", "redis": "ok"}

    # A write asked while it is away changes nothing and says so; no restart is needed afterwards.
    invite = {"emails": "colleague@away.example", "programme": "language", "csrf_token": token}
    assert client.post("/invitations/new", data=invite).status_code == 503
    server.start()
    assert client.get("/reports").status_code == 200
    assert client.get("/healthz").status_code == 200
    assert "colleague@away.example" not in client.get("/invitations").get_data(as_text=True)
