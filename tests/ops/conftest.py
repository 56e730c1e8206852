"""Fixtures for tests/ops: the environment every process of a deployment shares, and the deployment."""

from __future__ import annotations

import pytest

from devtools.testing import process_env
from tests.ops.support import Deployment


@pytest.fixture
def ops_env(settings, tmp_path):
    """The environment every process of the deployment gets (one per machine in real life)."""
    return process_env(
        settings,
        tmp_path / "instance",
        PORTAL_ENV="development",
        RELAY_INTERVAL_SECONDS="1",
        OUTBOX_REPUBLISH_AFTER_SECONDS="2",
        OUTBOX_RETRY_BASE_SECONDS="1",
        OUTBOX_RETRY_CAP_SECONDS="2",
        OUTBOX_CLAIM_SECONDS="20",
        PROVIDER_TIMEOUT_SECONDS="5",
    )


@pytest.fixture
def deployment(ops_env, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    running = Deployment(dict(ops_env), logs)
    yield running
    running.stop()
