"""Fixtures for tests/ops: the environment every process of a deployment shares, and the deployment."""

from __future__ import annotations

import os

import pytest

from tests.ops.support import Deployment


@pytest.fixture
def ops_env(settings, tmp_path):
    """The environment every process of the deployment gets (one per machine in real life)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "SECRET_KEY": settings.secret_key,
        "PORTAL_ENV": "development",
        "PORTAL_INSTANCE_PATH": str(tmp_path / "instance"),
        "RELAY_INTERVAL_SECONDS": "1",
        "OUTBOX_REPUBLISH_AFTER_SECONDS": "2",
        "OUTBOX_RETRY_BASE_SECONDS": "1",
        "OUTBOX_RETRY_CAP_SECONDS": "2",
        "OUTBOX_CLAIM_SECONDS": "20",
        "PROVIDER_TIMEOUT_SECONDS": "5",
    }


@pytest.fixture
def deployment(ops_env, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    running = Deployment(dict(ops_env), logs)
    yield running
    running.stop()
