"""The key a row is sent under is stored with it, and never recomputed: a release that changes how
keys are made, or a change of what they are made of, never retries a row under a key the provider
has not seen (that would be a second email)."""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
from datetime import timedelta

import sqlalchemy as sa

from devtools.processes import stop_process
from portal.core import clock, schema
from portal.core.db import Database
from portal.outbox.ground.queues import build_envelope
from portal.outbox.write.publish import publish_outbox_rows

# The previous release's insert (before migration 0022): it does not know the provider_key column.
PREVIOUS_RELEASE_INSERT = sa.text(
    """
    INSERT INTO email_outbox (id, family, recipient, idempotency_key, status, template, template_version,
        layout_version, template_input, environment, relay_since, created_at, updated_at)
    VALUES (:id, 'notice', :recipient, :key, 'pending', 'notice', 1, 1, :data, 'development',
        '1970-01-01T00:00:00.000000Z', :created_at, :created_at)
    """
)
DATA = '{"body": "Hello.", "subject": "Notice"}'


# The previous release's key function, frozen as it was (claims.ClaimedRow.provider_key before 0022).
def previous_release_key(environment, install_id, row_keys_since, created_at, idempotency_key, outbox_id):
    if row_keys_since is None or (created_at or "") < row_keys_since:
        return f"{environment}:{install_id}:{idempotency_key}"
    return f"{environment}:{install_id}:{outbox_id}"


def install(db):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT install_id, row_keys_since FROM portal_install")).one()


def stored_keys(db):
    with db.read() as conn:
        rows = conn.execute(
            sa.text("SELECT id, environment, created_at, idempotency_key, provider_key FROM email_outbox")
        ).mappings()
        return {row["id"]: dict(row) for row in rows}


def test_rows_written_before_the_keys_were_stored_keep_the_key_the_previous_release_sends_them_under(tmp_path):
    before = tmp_path / "migrations"
    before.mkdir()
    for migration in schema.discover():
        if migration.filename < "0022":
            shutil.copy(schema.MIGRATIONS_DIR / migration.filename, before / migration.filename)
    db = Database(f"sqlite+libsql:///{tmp_path / 'portal.db'}")
    try:
        schema.upgrade(db, before)
        install_id, since = install(db)
        with db.write() as conn:
            for outbox_id, key, created_at in [
                ("ntc_" + "1" * 32, "invitation:7:send:1", "2026-01-01T00:00:00.000000Z"),  # before 0020
                ("ntc_" + "2" * 32, "invitation:8:send:1", clock.iso(clock.utcnow())),  # after it
            ]:
                conn.execute(
                    PREVIOUS_RELEASE_INSERT,
                    {"id": outbox_id, "recipient": "a@example.org", "key": key, "data": DATA, "created_at": created_at},
                )
        schema.upgrade(db)
        # The previous release still runs during the deploy, and still writes rows without a key.
        with db.write() as conn:
            conn.execute(
                PREVIOUS_RELEASE_INSERT,
                {
                    "id": "ntc_" + "3" * 32,
                    "recipient": "b@example.org",
                    "key": "invitation:9:send:1",
                    "data": DATA,
                    "created_at": clock.iso(clock.utcnow()),
                },
            )
        rows = stored_keys(db)
        assert len(rows) == 3
        for outbox_id, row in rows.items():
            expected = previous_release_key(
                row["environment"], install_id, since, row["created_at"], row["idempotency_key"], outbox_id
            )
            assert row["provider_key"] == expected, outbox_id
        assert rows["ntc_" + "1" * 32]["provider_key"].endswith(":invitation:7:send:1")
    finally:
        db.dispose()


SHIM = """
import sys
sys.path.insert(0, {root!r})
import dataclasses
import sqlalchemy as sa
from portal.outbox.send import single
{key_function}
claim_and_freeze = single.claim_and_freeze

def claim_as_the_previous_release(db, *args, **kwargs):
    row, message = claim_and_freeze(db, *args, **kwargs)
    if row is None:
        return row, message
    with db.read() as conn:
        install_id, since = conn.execute(sa.text("SELECT install_id, row_keys_since FROM portal_install")).one()
    key = previous_release_key(row.environment, install_id, since, row.created_at, row.idempotency_key, row.id)
    return dataclasses.replace(row, provider_key=key), message

single.claim_and_freeze = claim_as_the_previous_release
import worker
sys.exit(worker.main(["--burst"]))
"""


def test_a_lost_answer_to_the_previous_release_is_retried_by_this_one_under_the_same_key(
    ctx, worker_env, tmp_path, provider_model, deliver
):
    """The deploy: the previous release's web process writes a row and its worker (a real process,
    sending under the previous release's key function) loses the provider's answer; this release's
    worker retries it. One email."""
    from tests.outbox.conftest import ROOT

    outbox_id = "ntc_" + "4" * 32
    with ctx.db.write() as conn:
        conn.execute(
            PREVIOUS_RELEASE_INSERT,
            {
                "id": outbox_id,
                "recipient": "colleague@example.org",
                "key": "invitation:4:send:1",
                "data": DATA,
                "created_at": clock.iso(clock.utcnow()),
            },
        )
    publish_outbox_rows(ctx.db, ctx.redis, [outbox_id], now=clock.utcnow())
    provider_model.fail_next("drop_after_accept")
    shim = tmp_path / "previous_release_worker.py"
    shim.write_text(SHIM.format(key_function=inspect.getsource(previous_release_key), root=str(ROOT)))
    previous = subprocess.Popen(
        [sys.executable, str(shim)], env=worker_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        output, _ = previous.communicate(timeout=60)
    finally:
        stop_process(previous)
    assert previous.returncode == 0, output
    (lost,) = provider_model.requests()
    assert lost["outcome"] == "dropped_after_accept", "the email went out; its answer was lost"

    # This release's delivery of the retry, once it is due.
    later = clock.utcnow() + timedelta(minutes=1)
    with ctx.db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET claim_expires_at = NULL, next_attempt_at = NULL"))
    assert deliver(outbox_id, attempt=2, now=later) == "ack:sent"
    first, retry = provider_model.requests()
    assert retry["idempotency_key"] == first["idempotency_key"]
    assert retry["outcome"] == "replayed"
    assert len(provider_model.sent()) == 1


def test_a_retry_reads_the_stored_key_even_when_what_keys_are_made_of_changed(ctx, make_outbox_row, provider_model):
    """The install's identity changes between two attempts (a restore, a rename of the environment's
    database): a key made again would be new, and the provider would send a second email."""
    from portal.outbox.send.consumer import handle_message

    outbox_id = make_outbox_row(publish=True)
    provider_model.fail_next("drop_after_accept")
    now = clock.utcnow()
    assert handle_message(ctx, build_envelope(outbox_id), attempt=1, dead_letter=False, now=now).startswith("retry:")
    with ctx.db.write() as conn:
        conn.execute(sa.text("UPDATE portal_install SET install_id = 'another-install', row_keys_since = NULL"))
        conn.execute(sa.text("UPDATE email_outbox SET claim_expires_at = NULL, next_attempt_at = NULL"))
    later = now + timedelta(minutes=1)
    assert handle_message(ctx, build_envelope(outbox_id), attempt=2, dead_letter=False, now=later) == "ack:sent"
    first, retry = provider_model.requests()
    assert retry["idempotency_key"] == first["idempotency_key"] and retry["outcome"] == "replayed"
    assert len(provider_model.sent()) == 1
