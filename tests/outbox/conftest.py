"""Outbox fixtures: the provider model over HTTP, a real Redis, real RQ workers in subprocesses."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from portal.outbox import EmailIntent, add_outbox_rows, publish_outbox_rows
from portal.outbox.consumer import use_context
from portal.context import PortalContext
from portal.provider_model import ProviderModel
from portal.processes import stop_process

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def provider_model():
    model = ProviderModel(port=0).start()
    yield model
    model.stop()


@pytest.fixture
def outbox_settings(settings, provider_model):
    # Short claims and delays so expiry and retries happen within a test.
    return settings.with_overrides(
        resend_api_url=provider_model.url,
        outbox_claim_seconds=2,
        outbox_retry_base_seconds=1,
        outbox_retry_cap_seconds=4,
        outbox_max_attempts=4,
        outbox_republish_after_seconds=1,
        relay_interval_seconds=1,
        provider_timeout_seconds=5,
    )


@pytest.fixture
def ctx(outbox_settings):
    context = PortalContext.from_settings(outbox_settings)
    use_context(context)
    yield context
    use_context(None)
    context.db.dispose()


@pytest.fixture
def make_outbox_row(ctx):
    """Builder: commit one intent (a notice by default) and return its outbox ID; publish if asked."""
    counter = iter(range(1, 100_000))

    def make(recipient=None, family="notice", data=None, publish=False, key=None):
        n = next(counter)
        intent = EmailIntent(
            family=family,
            recipient=recipient or f"person{n}@example.org",
            idempotency_key=key or f"test:{family}:{n}",
            data=data or {"subject": f"Notice {n}", "body": "Hello.\n\nSecond paragraph."},
        )
        with ctx.db.write() as conn:
            (outbox_id,) = add_outbox_rows(conn, [intent], ctx.settings)
        if publish:
            publish_outbox_rows(ctx.db, ctx.redis, [outbox_id])
        return outbox_id

    return make


@pytest.fixture
def outbox_row(ctx):
    def read(outbox_id):
        with ctx.db.read() as conn:
            row = conn.execute(sa.text("SELECT * FROM email_outbox WHERE id = :id"), {"id": outbox_id}).mappings().first()
            return dict(row) if row else None

    return read


@pytest.fixture
def frozen_count(ctx):
    def count():
        with ctx.db.read() as conn:
            return conn.execute(sa.text("SELECT COUNT(*) FROM email_frozen_payloads")).scalar()

    return count


@pytest.fixture
def worker_env(outbox_settings, tmp_path):
    s = outbox_settings
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": s.database_url,
        "REDIS_URL": s.redis_url,
        "SECRET_KEY": s.secret_key,
        "PORTAL_INSTANCE_PATH": str(tmp_path / "worker-instance"),
        "RESEND_API_URL": s.resend_api_url,
        "OUTBOX_CLAIM_SECONDS": str(s.outbox_claim_seconds),
        "OUTBOX_RETRY_BASE_SECONDS": str(s.outbox_retry_base_seconds),
        "OUTBOX_RETRY_CAP_SECONDS": str(s.outbox_retry_cap_seconds),
        "OUTBOX_MAX_ATTEMPTS": str(s.outbox_max_attempts),
        "OUTBOX_REPUBLISH_AFTER_SECONDS": str(s.outbox_republish_after_seconds),
        "RELAY_INTERVAL_SECONDS": str(s.relay_interval_seconds),
    }


@pytest.fixture
def workers(worker_env):
    """Start real `python worker.py` processes; all are stopped after the test."""
    started: list[subprocess.Popen] = []

    def start(burst=False, **extra_env):
        args = [sys.executable, str(ROOT / "worker.py")] + (["--burst"] if burst else [])
        process = subprocess.Popen(args, env={**worker_env, **extra_env}, cwd=ROOT,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started.append(process)
        return process

    def drain(timeout=60, **extra_env):
        process = start(burst=True, **extra_env)
        output, _ = process.communicate(timeout=timeout)
        assert process.returncode == 0, output
        return output

    start.drain = drain
    yield start
    for process in started:
        stop_process(process)


@pytest.fixture
def runner_for():
    """A Flask CLI runner for an app built on the outbox test settings."""
    from portal import create_app

    apps = []

    def make(ctx):
        app = create_app({"TESTING": True}, settings=ctx.settings)
        apps.append(app)
        return app.test_cli_runner()

    yield make
    for app in apps:
        app.extensions["portal"].db.dispose()
