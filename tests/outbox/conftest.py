"""Outbox fixtures: the provider model over HTTP, the engine's own `ctx`, real RQ workers in subprocesses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from devtools.processes import stop_process
from devtools.testing import process_env
from portal.context import build_context
from portal.outbox.send.consumer import use_context

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def settings(settings, provider_model):
    """The top-level settings with the provider model as the API, and short claims and delays so
    expiry and retries happen within a test. The app, `runner` and the workers all use these."""
    return settings.with_overrides(
        resend_api_url=provider_model.url,
        outbox_claim_seconds=3,
        outbox_retry_base_seconds=1,
        outbox_retry_cap_seconds=4,
        outbox_max_attempts=4,
        outbox_republish_after_seconds=1,
        relay_interval_seconds=1,
        provider_timeout_seconds=2.5,
    )


@pytest.fixture
def ctx(settings):
    """The engine's PortalContext as worker.py builds it (no Flask app), on the outbox settings;
    it replaces the top-level `ctx`, so `db`, `count` and the row fixtures read through it."""
    context = build_context(settings)
    use_context(context)
    yield context
    use_context(None)
    context.db.dispose()


@pytest.fixture
def worker_env(settings, tmp_path):
    s = settings
    return process_env(
        s,
        tmp_path / "worker-instance",
        OUTBOX_CLAIM_SECONDS=str(s.outbox_claim_seconds),
        PROVIDER_TIMEOUT_SECONDS=str(s.provider_timeout_seconds),
        OUTBOX_RETRY_BASE_SECONDS=str(s.outbox_retry_base_seconds),
        OUTBOX_RETRY_CAP_SECONDS=str(s.outbox_retry_cap_seconds),
        OUTBOX_MAX_ATTEMPTS=str(s.outbox_max_attempts),
        OUTBOX_REPUBLISH_AFTER_SECONDS=str(s.outbox_republish_after_seconds),
        RELAY_INTERVAL_SECONDS=str(s.relay_interval_seconds),
    )


@pytest.fixture
def workers(worker_env, tmp_path):
    """Start real `python worker.py` processes; all are stopped after the test. Each writes to its
    own file (`process.log_path`): a failure can show what the workers did, and a pipe nobody read
    would stop a worker that logs a lot once it filled."""
    started: list[subprocess.Popen] = []

    def start(burst=False, **extra_env):
        args = [sys.executable, str(ROOT / "worker.py")] + (["--burst"] if burst else [])
        log_path = tmp_path / "logs" / f"worker-{len(started) + 1}.log"
        log_path.parent.mkdir(exist_ok=True)
        with log_path.open("w") as log:
            process = subprocess.Popen(args, env={**worker_env, **extra_env}, cwd=ROOT, stdout=log, stderr=log)
        process.log_path = log_path
        started.append(process)
        return process

    def drain(timeout=60, **extra_env):
        process = start(burst=True, **extra_env)
        process.wait(timeout=timeout)
        output = process.log_path.read_text()
        assert process.returncode == 0, output
        return output

    start.drain = drain
    yield start
    for process in started:
        stop_process(process)
