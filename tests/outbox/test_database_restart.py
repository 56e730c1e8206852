"""The libSQL server killed and restarted under real workers with sends in flight: every email goes
out exactly once, no row is marked failed, and the workers and the relay carry on by themselves."""

from __future__ import annotations

import json
import time

import pytest
import sqlalchemy as sa
from rq.job import Job
from rq.registry import ScheduledJobRegistry
from rq.serializers import JSONSerializer

from devtools.sqld import SqldServer, copy_data
from devtools.testing import wait_until
from portal.core import clock
from portal.outbox.ground.queues import build_envelope, dead_letter_queue, email_queue
from portal.outbox.ground.statuses import SENT
from portal.outbox.send.consumer import handle_message

EMAILS = 12


@pytest.fixture
def sqld(tmp_path, sqld_template, sqld_keys):
    """This test's own server (on either pass), so the test can kill it and start it again."""
    holder = {"server": SqldServer(copy_data(sqld_template, tmp_path / "sqld-data"), sqld_keys).start()}
    yield holder
    holder["server"].stop()


@pytest.fixture
def database_url(sqld):
    return sqld["server"].database_url()


def test_the_server_killed_and_restarted_under_workers_loses_and_repeats_nothing(
    ctx, sqld, make_outbox_row, workers, provider_model
):
    server = sqld["server"]
    ids = [make_outbox_row(publish=True) for _ in range(EMAILS)]
    provider_model.fail_next("slow_accept", count=EMAILS, delay=0.5)  # sends are in flight when the server goes
    started = [workers(), workers()]
    assert wait_until(lambda: len(provider_model.requests()) >= 1, timeout=30)

    server.process.kill()  # no goodbye: as a crashed or unplugged host
    assert len(provider_model.sent()) < EMAILS // 2  # most of the work is still to do
    server.process.wait()
    time.sleep(3)  # workers meet the outage: their claims and settles fail for a while
    restarted = SqldServer(server.data_dir, server.keys, port=server.port).start()
    sqld["server"] = restarted

    def statuses():
        with ctx.db.read() as conn:
            return dict(conn.execute(sa.text("SELECT id, status FROM email_outbox")).all())

    all_sent = wait_until(lambda: set(statuses().values()) == {SENT}, timeout=90)
    assert all_sent, history_of_unsent(ctx, statuses(), started)
    assert sorted(statuses()) == sorted(ids)
    recipients = [email["to"][0] for email in provider_model.sent()]
    assert len(recipients) == EMAILS and len(set(recipients)) == EMAILS  # each once, none lost
    with ctx.db.read() as conn:
        reached = dict(conn.execute(sa.text("SELECT status_after, count(*) FROM email_outbox_events GROUP BY 1")).all())
    assert not {"failed", "dead_letter", "bounced"} & set(reached)  # no email was called failed
    # Nor did a delivery outlive its job's time: a worker's threads never waited on each other.
    assert not [w.log_path for w in started if "JobTimeoutException" in w.log_path.read_text()]


def history_of_unsent(ctx, statuses: dict, workers) -> str:
    """Each row not sent, with its events, and what the workers warned of: a failure on CI explains itself."""
    unsent = [outbox_id for outbox_id, status in statuses.items() if status != SENT]
    with ctx.db.read() as conn:
        events = conn.execute(
            sa.text(
                "SELECT outbox_id, kind, status_before, status_after, attempt, outcome_unknown, last_error, "
                "provider_message_id IS NOT NULL AS has_id, first_attempt, created_at FROM email_outbox_events "
                "WHERE outbox_id IN (SELECT value FROM json_each(:ids)) ORDER BY id"
            ),
            {"ids": json.dumps(unsent)},
        ).all()
    warnings = [line for w in workers for line in w.log_path.read_text().splitlines() if "WARNING" in line]
    return "\n".join(
        [f"{len(unsent)} of {len(statuses)} not sent:", *(repr(tuple(event)) for event in events), *warnings[-40:]]
    )


def test_a_message_that_meets_the_database_away_keeps_its_attempts(ctx, sqld, make_outbox_row):
    """On its last attempt, a message whose delivery cannot reach the database waits again: an
    outage is not the email's failure, and never sends it to the dead-letter queue."""
    outbox_id = make_outbox_row(publish=True)
    sqld["server"].stop()
    last = ctx.settings.outbox_max_attempts
    decision = handle_message(ctx, build_envelope(outbox_id), attempt=last, dead_letter=False, now=clock.utcnow())
    assert decision == "retry:database_unavailable"
    assert dead_letter_queue(ctx.redis).count == 0
    (waiting,) = [
        Job.fetch(i, connection=ctx.redis, serializer=JSONSerializer)
        for i in ScheduledJobRegistry(queue=email_queue(ctx.redis)).get_job_ids()
    ]
    assert waiting.meta["attempt"] == last  # the same attempt again, not one more
