"""Report email fixtures: the provider model over HTTP, subscribed managers, and deliveries through
the real consumer (in process) or real `python worker.py` processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from devtools.processes import stop_process
from devtools.testing import process_env
from portal.report_emails.operations import save_subscription
from tests.reports.conftest import company, insert_sessions, manager_client  # noqa: F401  (the report's own fixtures)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def settings(settings, provider_model):
    return settings.with_overrides(resend_api_url=provider_model.url, provider_timeout_seconds=5)


@pytest.fixture
def subscribe(db, user_id):
    """subscribe(email, frequency, since=ISO UTC): a manager's choice, as if made at `since`."""

    def make(email, frequency="monthly", since="2026-01-01T00:00:00.000000Z"):
        uid = user_id(email)
        with db.read() as conn:
            company_id = conn.execute(sa.text("SELECT company_id FROM users WHERE id = :u"), {"u": uid}).scalar_one()
        save_subscription(db, user_id=uid, company_id=company_id, frequency=frequency)
        with db.write() as conn:
            conn.execute(
                sa.text("UPDATE report_subscriptions SET since = :s WHERE user_id = :u"), {"s": since, "u": uid}
            )
        return uid

    return make


@pytest.fixture
def report_rows(outbox_rows):
    return lambda: outbox_rows(family="report")


@pytest.fixture
def drain_workers(settings, tmp_path):
    """Run a real `python worker.py --burst` until both queues are empty."""
    started = []

    def drain(timeout=120):
        env = process_env(settings, tmp_path / "worker-instance")
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "worker.py"), "--burst"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        started.append(process)
        output, _ = process.communicate(timeout=timeout)
        assert process.returncode == 0, output
        return output

    yield drain
    for process in started:
        stop_process(process)
