"""Fixtures shared by tests/ and e2e/: a private Redis for the run, and databases built from migrations.

Every test's database is a local libSQL file, or, with PORTAL_TEST_DATABASE=sqld (make test's second
pass), a real libSQL server (sqld, devtools/sqld.py) of its own, started from a migrated copy and
reached over HTTP with a signed token. A test that can only hold on a file says so with
`@pytest.mark.file_only("why")` and is skipped on sqld with that reason.
"""

from __future__ import annotations

import os
import shutil

import pytest

from devtools.testing import PrivateRedis
from portal.core import schema
from portal.core.db import Database
from portal.core.settings import Settings


@pytest.fixture(scope="session")
def redis_server():
    server = PrivateRedis().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory):
    """One database migrated from migrations/ per run; each test gets a copy of it."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    db = Database(f"sqlite+libsql:///{path}")
    schema.upgrade(db)
    with db.engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    db.dispose()
    return path


@pytest.fixture
def database_path(tmp_path, migrated_template):
    path = tmp_path / "portal.db"
    shutil.copyfile(migrated_template, path)
    return path


ON_SQLD = os.environ.get("PORTAL_TEST_DATABASE", "file") == "sqld"


def pytest_configure(config):
    config.addinivalue_line("markers", "file_only(reason): holds only on a local file; skipped on sqld, with why")


def pytest_collection_modifyitems(config, items):
    if not ON_SQLD:
        return
    for item in items:
        marker = item.get_closest_marker("file_only")
        if marker is not None:
            item.add_marker(pytest.mark.skip(reason=f"file only: {marker.args[0]}"))


@pytest.fixture(scope="session")
def sqld_keys(tmp_path_factory):
    from devtools.sqld import JwtKeys

    return JwtKeys(tmp_path_factory.mktemp("sqld-keys"))


@pytest.fixture(scope="session")
def sqld_template(tmp_path_factory, sqld_keys):
    """A sqld data directory migrated from migrations/ once per run; each test's server starts on a copy."""
    from devtools.sqld import SqldServer

    server = SqldServer(tmp_path_factory.mktemp("sqld-template") / "data", sqld_keys).start()
    try:
        db = Database(server.database_url())
        schema.upgrade(db)
        db.dispose()
    finally:
        server.stop()
    return server.data_dir


@pytest.fixture
def database_url(request, tmp_path):
    """The test's database: a copy of the migrated file, or (PORTAL_TEST_DATABASE=sqld) a server of its own."""
    if not ON_SQLD:
        return f"sqlite+libsql:///{request.getfixturevalue('database_path')}"
    from devtools.sqld import SqldServer, copy_data

    data = copy_data(request.getfixturevalue("sqld_template"), tmp_path / "sqld-data")
    server = SqldServer(data, request.getfixturevalue("sqld_keys")).start()
    request.addfinalizer(server.stop)
    return server.database_url()


@pytest.fixture
def settings(tmp_path, database_url, redis_server):
    redis_server.client().flushall()
    instance = tmp_path / "instance"
    return Settings.from_env(
        {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_server.url,
            "SECRET_KEY": "test-secret-key",
            "PORTAL_ENV": "development",
        },
        instance_path=instance,
    )


@pytest.fixture(scope="session")
def oidc_provider():
    """A real OpenID Connect provider (oidc-provider-mock) as its own process on a free port, for the run."""
    from devtools.oidc_provider import OidcProvider

    provider = OidcProvider().start()
    yield provider
    provider.stop()
