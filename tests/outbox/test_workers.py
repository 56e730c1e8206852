"""The whole path with real RQ workers (`python worker.py`) in their own processes."""

import json
import signal
import threading
import zlib
from contextlib import contextmanager
from datetime import timedelta

import redis
import rq

from devtools.testing import redis_dump, wait_until
from portal.core import clock
from portal.outbox.ground.periodic import run_once_with_lock
from portal.outbox.ground.queues import build_envelope, email_queue
from portal.outbox.ground.statuses import DEAD_LETTER, DELIVERY_EXHAUSTED, SENT
from portal.outbox.operate.retention import purge_task
from portal.outbox.send.consumer import handle_message
from portal.outbox.write.publish import publish_outbox_rows
from portal.outbox.write.relay import relay_pass, relay_task


def test_the_worker_listens_on_every_queue_the_engine_puts_jobs_on(ctx, make_outbox_row, workers, provider_model):
    make_outbox_row(publish=True)  # the publisher's queue
    exhausted = make_outbox_row()
    provider_model.fail_next("http_500")  # the consumer hands an exhausted job to the dead-letter queue
    handle_message(
        ctx, build_envelope(exhausted), attempt=ctx.settings.outbox_max_attempts, dead_letter=False, now=clock.utcnow()
    )
    campaign = make_outbox_row(family="campaign", data={"campaign_id": 1, "subject": "S", "body": "B", "user_id": 1})
    publish_outbox_rows(ctx.db, ctx.redis, [campaign], families=ctx.families, now=clock.utcnow())  # the bulk queue
    used = {key.decode().removeprefix("rq:queue:") for key in ctx.redis.smembers("rq:queues")}
    assert used == {"email", "email-dead-letter", "email-bulk"}

    workers()
    assert wait_until(lambda: rq.Worker.all(connection=ctx.redis), timeout=20)
    (worker,) = rq.Worker.all(connection=ctx.redis)
    assert set(worker.queue_names()) == used


def test_published_envelopes_are_json_without_contact_details(
    ctx, make_outbox_row, outbox_rows, count, workers, provider_model
):
    recipients = [f"volunteer{n}@example.org" for n in range(5)]
    ids = [make_outbox_row(recipient=r) for r in recipients]
    result = publish_outbox_rows(ctx.db, ctx.redis, ids, request_id="req-1", now=clock.utcnow())
    assert result.queued

    (job,) = email_queue(ctx.redis).get_jobs()[:1]
    raw = json.loads(zlib.decompress(ctx.redis.hget(f"rq:job:{job.id}", "data")))
    # (function, instance, args, kwargs) as JSON, never pickle; jobs of one pipeline share a timestamp,
    # so which one comes first is not ours to assert.
    assert raw[2] in [[build_envelope(outbox_id, "req-1")] for outbox_id in ids]

    workers.drain()
    assert [row["status"] for row in outbox_rows()] == [SENT] * 5
    assert sorted(e["to"][0] for e in provider_model.sent()) == sorted(recipients)
    dump = redis_dump(ctx.redis)
    assert dump, "the run should have left RQ's keys behind to inspect"
    assert not any(r in dump or "example.org" in dump for r in recipients)
    assert count("email_frozen_payloads") == 0


def test_row_committed_but_never_published_is_found_by_the_relay(
    make_outbox_row, outbox_rows, workers, provider_model, runner
):
    outbox_id = make_outbox_row()  # the process "stopped" after the domain transaction
    workers.drain()
    assert provider_model.sent() == []
    result = runner.invoke(args=["outbox", "relay"])
    assert result.exit_code == 0 and outbox_id in result.output
    workers.drain()
    assert [row["status"] for row in outbox_rows()] == [SENT] and len(provider_model.sent()) == 1


def test_redis_losing_every_key_loses_no_email(ctx, make_outbox_row, outbox_rows, workers, provider_model):
    ids = [make_outbox_row(publish=True) for _ in range(3)]
    ctx.redis.flushall()
    stale_period_later = clock.utcnow() + timedelta(seconds=ctx.settings.outbox_republish_after_seconds + 0.1)
    assert sorted(relay_pass(ctx.db, ctx.redis, ctx.settings, now=stale_period_later).published) == sorted(ids)
    workers.drain()
    assert [row["status"] for row in outbox_rows()] == [SENT] * 3 and len(provider_model.sent()) == 3


def test_the_same_envelope_many_times_to_several_workers_sends_once(
    ctx, make_outbox_row, outbox_rows, workers, provider_model
):
    outbox_id = make_outbox_row()
    provider_model.fail_next("slow_accept", delay=0.5)  # keep the first send in flight while others arrive
    queue = email_queue(ctx.redis)
    for _ in range(30):
        queue.enqueue("portal.outbox.send.consumer.deliver_outbox_message", build_envelope(outbox_id))
    processes = [workers(burst=True) for _ in range(3)]
    for process in processes:
        process.communicate(timeout=60)
        assert process.returncode == 0
    assert [row["status"] for row in outbox_rows()] == [SENT]
    assert len(provider_model.sent()) == 1
    assert len(provider_model.requests()) == 1, "the claim admits one delivery while it lasts"


def test_retries_are_delayed_by_the_rq_scheduler_then_sent(ctx, make_outbox_row, workers, provider_model, outbox_row):
    outbox_id = make_outbox_row(publish=True)
    provider_model.fail_next("http_500", count=2)
    workers()
    assert wait_until(lambda: outbox_row(outbox_id)["status"] == SENT, timeout=40)
    row = outbox_row(outbox_id)
    assert row["attempt_count"] == 3
    at = [r["at"] for r in provider_model.requests()]
    assert len(at) == 3 and len(provider_model.sent()) == 1


def test_exhausted_retries_end_in_the_dead_letter_queue(ctx, make_outbox_row, workers, provider_model, outbox_row):
    outbox_id = make_outbox_row(publish=True)
    provider_model.fail_next("http_429", count=50)
    workers()
    assert wait_until(lambda: outbox_row(outbox_id)["status"] == DEAD_LETTER, timeout=60)
    row = outbox_row(outbox_id)
    assert row["last_error"] == DELIVERY_EXHAUSTED
    assert row["attempt_count"] == ctx.settings.outbox_max_attempts
    assert provider_model.sent() == []


def test_worker_killed_mid_send_the_relay_recovers_and_one_email_goes_out(
    ctx, make_outbox_row, workers, provider_model, outbox_row
):
    outbox_id = make_outbox_row(publish=True)
    provider_model.fail_next("slow_accept", delay=2)
    victim = workers()
    assert wait_until(lambda: len(provider_model.requests()) == 1, timeout=20)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert outbox_row(outbox_id)["status"] == "processing"
    # The provider finishes the accepted request; our record of it died with the worker.
    assert wait_until(lambda: len(provider_model.sent()) == 1, timeout=10)

    claim_expired = clock.utcnow() + timedelta(seconds=ctx.settings.outbox_claim_seconds + 0.1)
    assert outbox_id in relay_pass(ctx.db, ctx.redis, ctx.settings, now=claim_expired).published
    # The relay's message, delivered at that moment by the consumer in this process: a worker
    # process reads its own clock, and could only wait for the dead worker's claim to expire.
    (job,) = email_queue(ctx.redis).get_jobs()
    handle_message(ctx, job.args[0], attempt=job.meta["attempt"], dead_letter=False, now=claim_expired)
    row = outbox_row(outbox_id)
    assert row["status"] == SENT and row["provider_message_id"] == provider_model.sent()[0]["id"]
    assert len(provider_model.sent()) == 1
    assert provider_model.requests()[-1]["outcome"] == "replayed"


def test_the_worker_runs_the_relay_on_its_schedule(ctx, make_outbox_row, workers, provider_model, outbox_row):
    outbox_id = make_outbox_row()  # committed, never published
    workers()
    assert wait_until(lambda: outbox_row(outbox_id)["status"] == SENT, timeout=30)
    assert len(provider_model.sent()) == 1


def test_only_one_relay_pass_runs_at_a_time(ctx):
    relay = relay_task(ctx.settings)
    ctx.redis.set(relay.lock_key, "another-worker", ex=30)
    assert run_once_with_lock(ctx, relay, now=clock.utcnow()) is False
    ctx.redis.delete(relay.lock_key)
    assert run_once_with_lock(ctx, relay, now=clock.utcnow()) is True
    assert ctx.redis.get(relay.lock_key) is None, "a finished pass releases its lock"


def test_the_retention_purge_runs_once_a_day_across_all_workers(ctx, make_outbox_row, outbox_row):
    purge_pass = purge_task(ctx.settings)
    first = make_outbox_row(status=SENT, recipient="first@example.org")
    past_retention = clock.utcnow() + timedelta(days=ctx.settings.outbox_retention_days + 1)
    assert run_once_with_lock(ctx, purge_pass, now=past_retention) is True
    assert outbox_row(first)["recipient"] == "", "erased: settled longer ago than OUTBOX_RETENTION_DAYS"

    second = make_outbox_row(status=SENT, provider_message_id="re_second", recipient="second@example.org")
    assert run_once_with_lock(ctx, purge_pass, now=past_retention) is False, "another worker, the same day"
    assert outbox_row(second)["recipient"] == "second@example.org"
    assert ctx.redis.ttl(purge_pass.lock_key) > 86400 - 60, "the day's lock outlives the pass"


def test_a_busy_worker_heartbeats_without_a_round_trip_per_email(ctx, make_outbox_row, workers, provider_model):
    """RQ wrote the worker's heartbeat five times per job, three of them as round trips of their
    own; the worker keeps the two RQ writes inside its pipelines, plus one every few seconds, and
    stays registered and alive in `rq info`."""
    emails = 30
    for _ in range(emails):
        make_outbox_row(publish=True)
    with redis_commands(ctx.settings.redis_url) as commands:
        workers()
        assert wait_until(lambda: len(provider_model.sent()) == emails, timeout=60)
        (worker,) = rq.Worker.all(connection=ctx.redis)
        assert ctx.redis.ttl(worker.key) > 60, "the worker's key is kept alive"
    heartbeats = [text for *_, text in commands if text.startswith("HSET rq:worker:") and " last_heartbeat " in text]
    jobs = [text for *_, text in commands if text.startswith("HSET rq:job:") and " status started " in text]
    assert len(jobs) >= emails
    # Two per job (its start's pipeline, and the check for suspension's) and the timed one; RQ's own: five.
    assert len(heartbeats) <= 3 * len(jobs), f"{len(heartbeats)} heartbeats for {len(jobs)} jobs started"


def test_rq_suspend_stops_a_busy_worker_and_rq_resume_lets_it_go_on(ctx, make_outbox_row, workers, provider_model):
    # The worker reads the suspension once a second instead of before every job (worker.py).
    import time

    from rq.suspension import resume, suspend

    rows = [make_outbox_row(publish=True) for _ in range(20)]
    provider_model.fail_next("slow_accept", count=len(rows), delay=0.2)  # four seconds of work
    workers()
    assert wait_until(lambda: len(provider_model.sent()) >= 2, timeout=30)
    suspend(ctx.redis)
    try:
        counts = []
        while len(counts) < 3 or counts[-1] != counts[-3]:  # a second with nothing sent
            counts.append(len(provider_model.sent()))
            time.sleep(0.5)
        assert counts[-1] < len(rows), "the suspended worker went on sending"
    finally:
        resume(ctx.redis)
    assert wait_until(lambda: len(provider_model.sent()) == len(rows), timeout=30)
    sent = [tag["value"] for email in provider_model.sent() for tag in email["tags"] if tag["name"] == "outbox_id"]
    assert sorted(sent) == sorted(rows), "each email once"


def test_a_job_starts_in_one_transaction_with_its_execution_record_and_rq_sees_it_running(
    ctx, make_outbox_row, outbox_row, workers, provider_model
):
    """RQ writes a job's execution record and the job's start as two transactions; the worker sends
    both in one (a round trip fewer per email), and RQ still shows the job running while it runs."""
    outbox_id = make_outbox_row(publish=True)
    provider_model.fail_next("slow_accept", delay=2.0)  # the job runs for two seconds
    with redis_commands(ctx.settings.redis_url) as commands:
        workers()
        assert wait_until(lambda: provider_model.requests(), timeout=30), "the job reached the provider"
        (worker,) = rq.Worker.all(connection=ctx.redis)
        (job_id,) = email_queue(ctx.redis).started_job_registry.get_job_ids()
        job = rq.job.Job.fetch(job_id, connection=ctx.redis)
        assert worker.state == "busy" and worker.get_current_job_id() == job_id
        assert job.get_status() == "started" and len(job.get_executions()) == 1
        assert wait_until(lambda: outbox_row(outbox_id)["status"] == SENT, timeout=30)

    starts = [
        i for i, (*_, text) in enumerate(commands) if text.startswith("HSET rq:job:") and " status started " in text
    ]
    assert len(starts) == 1, commands
    client = commands[starts[0]][:2]
    mine = [text for *who, text in commands[: starts[0]] if tuple(who) == client]
    record = max(i for i, text in enumerate(mine) if text.startswith("HSET rq:execution:"))
    assert "EXEC" not in mine[record:], "the execution record was committed before the job's start"


@contextmanager
def redis_commands(url: str):
    """Every command Redis runs while the block runs, as (client address, client port, command)."""
    commands, stop = [], threading.Event()

    def watch():
        # A quiet moment while a worker starts (longer over a database server) times the socket
        # out: the monitor reconnects and goes on until the block ends.
        while not stop.is_set():
            try:
                with redis.Redis.from_url(url).monitor() as monitor:
                    for command in monitor.listen():
                        commands.append((command["client_address"], command["client_port"], command["command"]))
                        if stop.is_set():
                            return
            except redis.TimeoutError:
                continue

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield commands
    finally:
        stop.set()
        redis.Redis.from_url(url).ping()  # one more command, so the monitor loop sees the stop
        watcher.join(5)
