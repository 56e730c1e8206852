"""Intents inside the caller's transaction; publication after commit, and what happens when it fails."""

import dataclasses
import json

import pytest
import sqlalchemy as sa

from devtools.processes import free_port
from portal.core import clock
from portal.core.db import AmbiguousCommitError
from portal.invitations.emails import INVITATION
from portal.notices.emails import NOTICE
from portal.outbox import EmailIntent, write_then_publish
from portal.outbox.ground.queues import email_queue
from portal.outbox.ground.statuses import ENQUEUED, PENDING, PROCESSING
from portal.outbox.operate.events import WRITTEN_AND_QUEUED, timeline
from portal.outbox.write.intents import add_outbox_rows
from portal.outbox.write.publish import publish_outbox_rows
from portal.outbox.write.relay import relay_pass


def intent(n=1, key=None):
    return EmailIntent(
        family=NOTICE, recipient=f"p{n}@example.org", idempotency_key=key or f"k{n}", data={"subject": "s", "body": "b"}
    )


def test_replaying_an_intent_creates_no_second_row(ctx, count):
    with ctx.db.write() as conn:
        first = add_outbox_rows(conn, [intent(1), intent(2)], ctx.settings, now=clock.utcnow())
    with ctx.db.write() as conn:
        again = add_outbox_rows(conn, [intent(1), intent(2)], ctx.settings, now=clock.utcnow())
    assert first == again and count("email_outbox") == 2


def test_rows_added_later_get_ids_that_sort_later(ctx):
    # Time-ordered IDs keep a campaign's inserts at the end of every index keyed by row ID
    # (families.new_row_id); random ones would touch a random page of each per row.
    added = []
    for start in range(0, 300, 100):
        with ctx.db.write() as conn:
            added += add_outbox_rows(
                conn, [intent(n) for n in range(start, start + 100)], ctx.settings, now=clock.utcnow()
            )
    assert len(set(added)) == 300 and added == sorted(added)


def test_intent_and_domain_change_commit_together_or_not_at_all(ctx, count):
    with pytest.raises(RuntimeError):
        with ctx.db.write() as conn:
            add_outbox_rows(conn, [intent(1)], ctx.settings, now=clock.utcnow())
            raise RuntimeError("the domain write failed after the intent was added")
    assert count("email_outbox") == 0


def test_an_ambiguous_commit_is_raised_not_replayed(ctx, count):
    runs = []
    with ctx.db.write() as conn:
        conn.exec_driver_sql("CREATE TABLE parents (id INTEGER PRIMARY KEY)")
        conn.exec_driver_sql(
            "CREATE TABLE children (parent_id INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)"
        )
    with pytest.raises(AmbiguousCommitError):
        with ctx.db.write() as conn:
            runs.append(1)
            add_outbox_rows(conn, [intent(1)], ctx.settings, now=clock.utcnow())
            conn.exec_driver_sql("INSERT INTO children VALUES (99)")  # fails only at COMMIT
    assert runs == [1]
    assert count("email_outbox") == 0


def test_a_busy_write_lock_is_waited_for_before_any_statement(ctx, count):
    import threading
    import time

    holder_ready, release = threading.Event(), threading.Event()

    def hold_the_lock():
        with ctx.db.write() as conn:
            conn.exec_driver_sql("CREATE TABLE held (x)")
            holder_ready.set()
            release.wait(5)

    thread = threading.Thread(target=hold_the_lock)
    thread.start()
    holder_ready.wait(5)
    threading.Timer(0.3, release.set).start()
    started = time.monotonic()
    with ctx.db.write() as conn:
        add_outbox_rows(conn, [intent(1)], ctx.settings, now=clock.utcnow())
    thread.join()
    assert count("email_outbox") == 1
    assert time.monotonic() - started >= 0.2


def test_publish_moves_rows_to_enqueued(ctx, outbox_row):
    with ctx.db.write() as conn:
        ids = add_outbox_rows(conn, [intent(1), intent(2)], ctx.settings, now=clock.utcnow())
    result = publish_outbox_rows(ctx.db, ctx.redis, ids, now=clock.utcnow())
    assert result.queued and result.outbox_ids == tuple(ids)
    assert [outbox_row(i)["status"] for i in ids] == [ENQUEUED, ENQUEUED]
    assert email_queue(ctx.redis).count == 2


def test_publish_failure_leaves_rows_pending_with_the_reason(ctx, outbox_row):
    import redis

    with ctx.db.write() as conn:
        ids = add_outbox_rows(conn, [intent(1)], ctx.settings, now=clock.utcnow())
    unreachable = redis.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.2)
    result = publish_outbox_rows(ctx.db, unreachable, ids, now=clock.utcnow())
    assert result.queued is False
    row = outbox_row(ids[0])
    assert row["status"] == PENDING and row["last_error"] == "publish_failed: ConnectionError"


def test_a_late_publish_never_overwrites_a_claim(ctx, outbox_row):
    with ctx.db.write() as conn:
        ids = add_outbox_rows(conn, [intent(1)], ctx.settings, now=clock.utcnow())
        conn.execute(sa.text("UPDATE email_outbox SET status = 'processing' WHERE id = :id"), {"id": ids[0]})
    publish_outbox_rows(ctx.db, ctx.redis, ids, now=clock.utcnow())
    assert outbox_row(ids[0])["status"] == PROCESSING


def test_outbox_status_command_counts_by_family_and_status(ctx, runner):
    with ctx.db.write() as conn:
        add_outbox_rows(conn, [intent(1), intent(2)], ctx.settings, now=clock.utcnow())
    result = runner.invoke(args=["outbox", "status", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.output) == [{"family": "notice", "status": "pending", "count": 2}]
    assert "notice" in runner.invoke(args=["outbox", "status"]).output


# --- the unit of work: write_then_publish -------------------------------------------------------


def queued_jobs(ctx):
    return email_queue(ctx.redis).count


def test_the_unit_of_work_publishes_only_after_its_commit(ctx, count, outbox_row):
    with write_then_publish(ctx, now=clock.utcnow()) as work:
        (outbox_id,) = work.add(intent(1))
        assert count("email_outbox") == 0, "not yet committed: another connection sees nothing"
        assert queued_jobs(ctx) == 0, "nothing is published inside the transaction"
    assert outbox_row(outbox_id)["status"] == ENQUEUED and work.queued
    assert queued_jobs(ctx) == 1


def unreachable_redis():
    import redis

    return redis.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.2)


def test_a_block_writes_its_rows_enqueued_and_its_publication_writes_nothing_more(ctx, monkeypatch, outbox_row):
    writes = count_write_transactions(ctx.db, monkeypatch)
    now = clock.utcnow()
    with write_then_publish(ctx, now=now) as work:
        (outbox_id,) = work.add(intent(1))
    assert len(writes) == 1 and work.queued and queued_jobs(ctx) == 1
    row = outbox_row(outbox_id)
    assert (row["status"], row["enqueued_at"]) == (ENQUEUED, clock.iso(now))
    assert [entry.kind for entry in timeline(ctx.db, row)] == [WRITTEN_AND_QUEUED]
    assert relay_pass(ctx.db, ctx.redis, ctx.settings, now=now).published == (), "its message is in the queue"


def test_a_failed_publication_after_a_block_leaves_its_rows_pending_for_the_relays_next_pass(ctx, outbox_row):
    now = clock.utcnow()
    with write_then_publish(dataclasses.replace(ctx, redis=unreachable_redis()), now=now) as work:
        (outbox_id,) = work.add(intent(1))
    assert not work.queued and queued_jobs(ctx) == 0
    row = outbox_row(outbox_id)
    assert (row["status"], row["last_error"]) == (PENDING, "publish_failed: ConnectionError")
    report = relay_pass(ctx.db, ctx.redis, ctx.settings, families=ctx.families, now=now)
    assert report.published == (outbox_id,), "due at once, not a stale period later: its message is not queued"
    assert outbox_row(outbox_id)["status"] == ENQUEUED and queued_jobs(ctx) == 1


def test_a_replayed_intent_whose_publication_failed_is_marked_once_a_block_publishes_it(ctx, outbox_row):
    with write_then_publish(dataclasses.replace(ctx, redis=unreachable_redis()), now=clock.utcnow()) as work:
        (outbox_id,) = work.add(intent(1))
    assert outbox_row(outbox_id)["status"] == PENDING
    with write_then_publish(ctx, now=clock.utcnow()) as work:
        assert work.add(intent(1)) == [outbox_id], "the replay keeps its row"
    row = outbox_row(outbox_id)
    assert (row["status"], row["last_error"]) == (ENQUEUED, None), "the block wrote no row: it marks the publication"


def test_a_block_that_raises_writes_and_publishes_nothing(ctx, count):
    with pytest.raises(RuntimeError):
        with write_then_publish(ctx, now=clock.utcnow()) as work:
            work.conn.exec_driver_sql("CREATE TABLE domain_rows (x)")
            work.add(intent(1))
            raise RuntimeError("the domain write failed after the intent was added")
    assert count("email_outbox") == 0
    assert count("sqlite_master", "name = 'domain_rows'") == 0
    assert queued_jobs(ctx) == 0 and ctx.redis.keys("rq:*") == []


def test_a_block_that_returns_early_commits_what_it_wrote(ctx, count, outbox_row):
    def replay_that_returns_early():
        with write_then_publish(ctx, now=clock.utcnow()) as work:
            work.conn.exec_driver_sql("CREATE TABLE domain_rows (x)")
            (outbox_id,) = work.add(intent(1))
            return outbox_id

    outbox_id = replay_that_returns_early()
    assert count("sqlite_master", "name = 'domain_rows'") == 1
    assert outbox_row(outbox_id)["status"] == ENQUEUED and queued_jobs(ctx) == 1


def count_write_transactions(db, monkeypatch) -> list[str]:
    """The write transactions (BEGIN IMMEDIATE) `db` opens from now on, by kind: 'block' for a
    db.write(), 'whole' for a write given whole sent to a server in one request (on a local file a
    write given whole is a db.write())."""
    opened = []
    write, run_on_server = db.write, db._run_on_server

    def counted_write(*args, **kwargs):
        opened.append("block")
        return write(*args, **kwargs)

    def counted_run_on_server(steps, *, begin, **kwargs):
        if begin == "BEGIN IMMEDIATE":
            opened.append("whole")
        return run_on_server(steps, begin=begin, **kwargs)

    monkeypatch.setattr(db, "write", counted_write)
    monkeypatch.setattr(db, "_run_on_server", counted_run_on_server)
    return opened


def batchable(n):
    return EmailIntent(
        family=INVITATION,
        recipient=f"p{n}@example.org",
        idempotency_key=f"invitation:{n}:send:1",
        subject_ref=f"invitation:{n}",
        data={"company_name": "Acme", "programme": "language", "token_nonce": f"n{n}", "language": "en"},
    )


def test_the_unit_of_work_composes_its_batch_in_its_own_transaction(ctx, monkeypatch, outbox_row):
    writes = count_write_transactions(ctx.db, monkeypatch)
    with write_then_publish(ctx, now=clock.utcnow()) as work:
        ids = work.add(batchable(1), batchable(2))
        ids += work.add(batchable(3), intent(4))  # a notice rides in no batch
    assert len(writes) == 1, "the block with its batch; a publication that succeeds writes nothing"
    batch = outbox_row(ids[0])["batch_id"]
    assert batch is not None
    assert [(outbox_row(i)["batch_id"], outbox_row(i)["batch_position"]) for i in ids] == [
        (batch, 0),
        (batch, 1),
        (batch, 2),
        (None, None),
    ]
    assert work.carriers == [ids[0], ids[3]] and queued_jobs(ctx) == 2


def test_a_block_that_raises_composes_no_batch(ctx, count):
    with pytest.raises(RuntimeError):
        with write_then_publish(ctx, now=clock.utcnow()) as work:
            work.add(batchable(1), batchable(2))
            raise RuntimeError("the domain write failed after the intents were added")
    assert count("email_batches") == 0 and count("email_outbox") == 0 and queued_jobs(ctx) == 0
