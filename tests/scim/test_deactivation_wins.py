"""A colleague the directory deactivates gets nothing more: SCIM's deactivation is the People page's,
with a real worker process holding an email to them in a wait for a rate slot."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from devtools.processes import stop_process
from devtools.testing import process_env, start_workers, wait_until
from portal.outbox.send.rate_limit import PAUSE_KEY
from tests.scim.test_users import PATCH, new_user

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def settings(settings, provider_model):
    return settings.with_overrides(resend_api_url=provider_model.url)


def status(db, outbox_id):
    with db.read() as conn:
        return tuple(
            conn.execute(sa.text("SELECT status, last_error FROM email_outbox WHERE id = :id"), {"id": outbox_id}).one()
        )


def test_an_email_waiting_for_a_rate_slot_is_not_sent_once_the_directory_deactivates_its_recipient(
    ctx, scim_company, directory, make_outbox_row, make_due, provider_model, tmp_path
):
    _company, token = scim_company()
    scim = directory(token)
    user = scim.post("/Users", json=new_user("ada@acme.example")).json()
    outbox_id = make_outbox_row(recipient="ada@acme.example", publish=True)
    ctx.redis.set(PAUSE_KEY, "1", px=20_000)  # the provider said wait: the worker waits for a slot
    env = process_env(ctx.settings, tmp_path / "worker", OUTBOX_CLAIM_SECONDS="30")
    (worker,) = start_workers(env, 1)
    try:
        # Claimed, and waiting for a slot: in the worker's hands, or released by it to wait for its retry.
        assert wait_until(
            lambda: status(ctx.db, outbox_id) in {("processing", None), ("retry", "rate_limit_wait")}, timeout=30
        )

        requested = time.monotonic()
        deactivated = scim.patch(
            f"/Users/{user['id']}",
            json={"schemas": [PATCH], "Operations": [{"op": "Replace", "path": "active", "value": "False"}]},
        )
        assert deactivated.status_code == 200
        ctx.redis.delete(PAUSE_KEY)  # the wait ends: the delivery checks again before its provider call

        assert wait_until(lambda: status(ctx.db, outbox_id) == ("cancelled", "recipient_deactivated"), timeout=60)
        assert time.monotonic() - requested < 60, "within 60 seconds of the request"
        make_due(outbox_id)  # its retry time comes, and the worker is free to send
        drained = subprocess.run(
            [sys.executable, "worker.py", "--burst"], env=env, cwd=ROOT, capture_output=True, timeout=120
        )  # every queued job run to the end
        assert drained.returncode == 0, drained.stderr[-2000:]
        assert provider_model.requests() == [], "the colleague who left gets nothing"
    finally:
        stop_process(worker)
