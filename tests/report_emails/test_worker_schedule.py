"""The schedule inside the worker: a real `python worker.py` runs the pass under a Redis lock and
sends what is due; a pass finds the lock held by another worker and does nothing."""

import subprocess
import sys

import pytest

from devtools.processes import stop_process
from devtools.testing import process_env, wait_until
from portal.core import clock
from portal.core.settings import ConfigError, Settings
from portal.outbox.ground.periodic import run_once_with_lock
from portal.outbox.ground.statuses import SENT
from portal.report_emails.operations import schedule_task
from tests.report_emails.conftest import ROOT


def test_a_running_worker_sends_the_missed_months_on_its_own(settings, tmp_path, company, subscribe, report_rows):
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "monthly", since="2026-10-15T00:00:00.000000Z")  # October (and any month since) is due
    env = process_env(settings, tmp_path / "worker-instance", REPORT_SCHEDULE_INTERVAL_SECONDS="1")
    worker = subprocess.Popen(
        [sys.executable, str(ROOT / "worker.py")], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )

    def all_sent():
        rows = report_rows()
        return bool(rows) and all(r["status"] == SENT for r in rows)

    try:
        wait_until(all_sent, timeout=90, interval=0.5)
    finally:
        stop_process(worker)
    rows = report_rows()
    assert rows and {r["status"] for r in rows} == {SENT}
    months = [r["subject_ref"].rsplit(":", 1)[1] for r in rows]
    assert months[0] == "2026-10" and len(months) == len(set(months)), "each missed month once"


def test_a_pass_does_nothing_while_another_worker_holds_the_lock(ctx, company, subscribe, count):
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "monthly", since="2026-10-15T00:00:00.000000Z")
    task = schedule_task(ctx.settings)
    ctx.redis.set(task.lock_key, "another-worker", ex=60)
    assert run_once_with_lock(ctx, task, now=clock.utcnow()) is False
    assert count("report_runs") == 0
    ctx.redis.delete(task.lock_key)
    assert run_once_with_lock(ctx, task, now=clock.utcnow()) is True
    assert count("report_runs") >= 1
    assert ctx.redis.get(task.lock_key) is None, "the pass released its own lock"


@pytest.mark.parametrize("value", ["0", "soon"])
def test_a_bad_schedule_interval_stops_start_up_naming_the_variable(value, tmp_path):
    with pytest.raises(ConfigError, match="REPORT_SCHEDULE_INTERVAL_SECONDS"):
        Settings.from_env({"REPORT_SCHEDULE_INTERVAL_SECONDS": value, "SECRET_KEY": "x"}, instance_path=tmp_path)
