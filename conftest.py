"""Fixtures shared by tests/ and e2e/: a private Redis for the run, and databases built from migrations."""

from __future__ import annotations

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


@pytest.fixture
def settings(tmp_path, database_path, redis_server):
    redis_server.client().flushall()
    instance = tmp_path / "instance"
    return Settings.from_env(
        {
            "DATABASE_URL": f"sqlite+libsql:///{database_path}",
            "REDIS_URL": redis_server.url,
            "SECRET_KEY": "test-secret-key",
            "PORTAL_ENV": "development",
        },
        instance_path=instance,
    )
