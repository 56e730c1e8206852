"""A web process on an embedded replica of a real libSQL server (sqld): it starts, serves pages, and
a person sees their own write on the next page."""

from __future__ import annotations

import pytest

from devtools.sqld import SqldServer, copy_data
from portal import create_app
from portal.auth.operations import create_user
from portal.core.db import Database
from portal.web.extensions import EXTENSION_KEY
from tests.conftest import AuthActions
from tests.pages import csrf_from

MANAGER = "manager@replica.example"


@pytest.fixture
def replica_app(tmp_path, sqld_template, sqld_keys, settings):
    server = SqldServer(copy_data(sqld_template, tmp_path / "data"), sqld_keys).start()
    primary = Database(server.database_url())
    create_user(primary, email=MANAGER, password="correct-horse-battery", role="manager", company="Replica Ltd")
    primary.dispose()
    token = sqld_keys.token()
    url = f"sqlite+libsql:///{tmp_path / 'replica.db'}?sync_url={server.http_url}&authToken={token}"
    app = create_app({"TESTING": True}, settings=settings.with_overrides(database_url=url))
    yield app
    app.extensions[EXTENSION_KEY].db.dispose()
    server.stop()


def test_a_web_process_on_a_replica_serves_pages_and_shows_a_person_their_own_write(replica_app):
    client = replica_app.test_client()
    assert client.get("/healthz").status_code == 200
    assert AuthActions(client).login(MANAGER).status_code == 302
    token = csrf_from(client.get("/invitations/new").get_data(as_text=True))
    answer = client.post(
        "/invitations/new", data={"emails": "new@replica.example", "programme": "language", "csrf_token": token}
    )
    assert answer.status_code == 302
    assert "new@replica.example" in client.get("/invitations").get_data(as_text=True)
