"""A person who asks to be erased, and the admin who erases them, read when the last copy is gone:
at once on a local file, within DATABASE_HISTORY_DAYS on a libSQL server (docs/deploy.md)."""

from __future__ import annotations

import dataclasses

import pytest

from devtools.sqld import SqldServer, copy_data
from portal.privacy.retention import LastCopy, last_copy
from portal.web.extensions import EXTENSION_KEY


def test_a_volunteer_on_a_local_file_reads_that_nothing_stays(client, auth, make_user):
    auth.login(make_user("employee"))
    page = client.get("/account/erase").get_data(as_text=True)
    assert "Nothing erased stays in the portal's database: it is overwritten at once." in page


class TestOnAServer:
    """The portal on a libSQL server of its own, whose operator purges its history every 7 days."""

    @pytest.fixture
    def on_server(self, tmp_path, sqld_template, sqld_keys):
        server = SqldServer(copy_data(sqld_template, tmp_path / "server"), sqld_keys).start()
        yield server
        server.stop()

    @pytest.fixture
    def settings(self, settings, on_server):
        return dataclasses.replace(
            settings,
            database_url=on_server.database_url(),
            database_history_days=7,
        )

    def test_the_admin_and_the_volunteer_read_how_long_its_history_keeps_them(self, client, auth, make_user, ctx):
        assert last_copy(ctx.db, ctx.settings) == LastCopy(on_server=True, days=7)
        within = "the last copy of what is erased is gone within 7 days."
        auth.login(make_user("employee"))
        assert within in client.get("/account/erase").get_data(as_text=True)
        auth.logout()
        auth.login(make_user("admin"))
        assert within in client.get("/admin/privacy").get_data(as_text=True)

    def test_with_no_period_said_the_admin_is_told_what_to_set(self, client, auth, make_user, app):
        app.extensions[EXTENSION_KEY].settings = dataclasses.replace(
            app.extensions[EXTENSION_KEY].settings, database_history_days=None
        )
        auth.login(make_user("admin"))
        page = client.get("/admin/privacy").get_data(as_text=True)
        assert "until its operator purges them: set <code>DATABASE_HISTORY_DAYS</code>" in page
