"""/metrics' token rule, the waiting rows' ages, and /readyz, against the app in this process."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import sqlalchemy as sa

from devtools.processes import stop_process
from devtools.testing import process_env, wait_until
from portal import create_app
from portal.core import clock
from portal.core.heartbeat import HEARTBEATS_KEY, STALE_AFTER_SECONDS, beat
from portal.web.extensions import EXTENSION_KEY
from tests.ops.support import ROOT
from tests.ops.test_metrics import parse, value

TOKEN = "metrics-token-0123456789"


@pytest.fixture
def app_with(settings):
    """app_with(**setting_overrides): an app on changed settings (its database is disposed after)."""
    made = []

    def build(**overrides):
        app = create_app({"TESTING": True}, settings=settings.with_overrides(**overrides))
        made.append(app)
        return app

    yield build
    for app in made:
        app.extensions[EXTENSION_KEY].db.dispose()


def test_metrics_are_open_in_development_without_a_token(client):
    answer = client.get("/metrics")
    assert answer.status_code == 200 and "portal_outbox_rows" in answer.get_data(as_text=True)


def test_with_a_token_only_its_bearer_may_scrape(app_with):
    client = app_with(metrics_token=TOKEN).test_client()
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong-token-0123456789"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": TOKEN}).status_code == 401
    answer = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200 and "portal_outbox_rows" in answer.get_data(as_text=True)


@pytest.mark.parametrize("environment", ["production", "staging"])
def test_without_a_token_metrics_do_not_exist_outside_development(app_with, environment):
    client = app_with(portal_env=environment).test_client()
    assert client.get("/metrics").status_code == 404
    token_client = app_with(portal_env=environment, metrics_token=TOKEN).test_client()
    assert token_client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_the_oldest_waiting_rows_ages_come_from_the_database(client, make_outbox_row, db):
    make_outbox_row()  # pending, just now
    old_pending = make_outbox_row()
    old_retry = make_outbox_row(status="retry", provider_message_id=None)
    make_outbox_row(status="sent", provider_message_id="re_1")
    with db.write() as conn:
        for outbox_id, seconds in ((old_pending, 600), (old_retry, 7200)):
            conn.execute(
                sa.text("UPDATE email_outbox SET created_at = :at WHERE id = :id"),
                {"at": clock.iso_in(-seconds), "id": outbox_id},
            )
    samples = parse(client.get("/metrics").get_data(as_text=True))
    assert 600 <= value(samples, "portal_outbox_oldest_age_seconds", status="pending") < 660
    assert 7200 <= value(samples, "portal_outbox_oldest_age_seconds", status="retry") < 7260
    assert value(samples, "portal_outbox_rows", family="notice", status="pending") == 2
    assert value(samples, "portal_outbox_rows", family="notice", status="retry") == 1
    assert value(samples, "portal_outbox_rows", family="notice", status="sent") == 1
    assert value(samples, "portal_outbox_rows", family="invitation", status="sent") == 0


def test_ready_only_once_a_worker_has_beaten(client, ctx):
    waiting = client.get("/readyz")
    assert waiting.status_code == 503
    assert waiting.json["failing"] == ["worker_heartbeat"]
    assert waiting.json["checks"]["database"]["ok"] and waiting.json["checks"]["redis"]["ok"]

    beat(ctx.redis, "host-a:1", now=time.time() - 5)
    beat(ctx.redis, "host-b:2", now=time.time() - 2)
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json["status"] == "ok"
    heartbeat = ready.json["checks"]["worker_heartbeat"]
    assert 2 <= heartbeat["newest_age_seconds"] < 10 and heartbeat["live_workers"] == 2
    assert ready.json["checks"]["database"]["ms"] >= 0


def test_a_stale_heartbeat_is_not_ready(client, ctx):
    beat(ctx.redis, "host-a:1", now=time.time() - STALE_AFTER_SECONDS - 30)
    answer = client.get("/readyz")
    assert answer.status_code == 503 and answer.json["failing"] == ["worker_heartbeat"]
    assert answer.json["checks"]["worker_heartbeat"]["newest_age_seconds"] >= STALE_AFTER_SECONDS + 30
    assert answer.json["checks"]["worker_heartbeat"]["live_workers"] == 0


def test_redis_down_is_named(app_with, ctx):
    beat(ctx.redis, "host-a:1")
    client = app_with(redis_url="redis://127.0.0.1:1/0").test_client()
    answer = client.get("/readyz")
    assert answer.status_code == 503
    assert answer.json["failing"] == ["redis", "worker_heartbeat"]
    assert answer.json["checks"]["database"]["ok"]
    # Liveness stays the shallow check it was.
    assert client.get("/healthz").status_code == 503


def test_a_real_worker_beats(client, ctx, settings, tmp_path):
    env = process_env(settings, tmp_path / "w")
    worker = subprocess.Popen([sys.executable, str(ROOT / "worker.py")], env=env, cwd=ROOT)
    try:
        assert wait_until(lambda: client.get("/readyz").status_code == 200, timeout=30)
    finally:
        stop_process(worker)
    # A worker that stops takes its beat with it.
    assert ctx.redis.zcard(HEARTBEATS_KEY) == 0
    assert client.get("/readyz").status_code == 503


def test_the_rows_by_family_and_status_are_counted_from_an_index_alone(db):
    """A scrape must stay cheap at a million rows: the count never reads the table itself."""
    from portal.outbox.operate.reads import ROWS_BY_FAMILY_AND_STATUS

    with db.read() as conn:
        plan = " ".join(row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {ROWS_BY_FAMILY_AND_STATUS.text}"))
    # The console's (family, status, created_at, id) index serves it too (0016).
    assert "USING COVERING INDEX email_outbox_console_family_status" in plan, plan
