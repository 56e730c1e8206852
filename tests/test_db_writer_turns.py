"""Writers queue for their turn: to a local file, across processes before SQLite's lock; to a
server, within their process before the server's (portal/core/db.py)."""

import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from portal.core.db import CHECKPOINT_EVERY_WRITES, Database, DatabaseBusyError, WriterTurns

HOLD_SECONDS = 0.4


HOLDER = """
import sys, time
from portal.core.db import Database
db = Database(sys.argv[1])
if sys.argv[3] == "write":
    with db.write() as conn:
        conn.exec_driver_sql("CREATE TABLE held (x)")
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
else:
    with db.writer_turns.turn() as had_turn:
        assert had_turn
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
"""


def hold_turn_in_another_process(database_url: str, seconds: float, *, write: bool = True) -> subprocess.Popen:
    """A process that takes a write (or only the turn), says so, and keeps it for `seconds`."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, database_url, str(seconds), "write" if write else "turn"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "held"
    return process


@pytest.fixture
def database_url(tmp_path):
    url = f"sqlite+libsql:///{tmp_path / 'portal.db'}"
    db = Database(url)
    with db.write() as conn:
        conn.exec_driver_sql("CREATE TABLE items (name TEXT)")
    db.dispose()
    return url


def test_a_local_database_queues_its_writers_beside_the_file(database_url, tmp_path):
    db = Database(database_url)
    assert db.writer_turns.lock_path == str(tmp_path / "portal.db-writers")
    db.dispose()


def test_writers_to_a_server_take_turns_within_their_process():
    # No file to lock beside a server: the turn is the process's own, shared by every Database on
    # the URL, and a writer that cannot have it writes nothing.
    url = "sqlite+libsql://example.turso.io/?secure=true"
    first, second = Database(url, busy_timeout_ms=200), Database(url, busy_timeout_ms=200)
    with first.writer_turns.turn():
        with pytest.raises(DatabaseBusyError, match="nothing was written"):
            with second.writer_turns.turn():
                pass
    with second.writer_turns.turn() as had_turn:
        assert had_turn


def test_a_writer_waits_for_the_turn_another_process_holds_and_then_writes(database_url):
    holder = hold_turn_in_another_process(database_url, HOLD_SECONDS)
    db = Database(database_url)
    try:
        with db.writer_turns.turn() as had_turn:
            assert had_turn
            with db.read() as conn:  # the turn came back only once the holder's write was committed
                assert conn.exec_driver_sql("SELECT COUNT(*) FROM held").scalar() == 0
        with db.write() as conn:
            conn.exec_driver_sql("INSERT INTO items VALUES ('after the holder')")
        with db.read() as conn:
            assert conn.exec_driver_sql("SELECT name FROM items").scalars().all() == ["after the holder"]
    finally:
        holder.wait(5)
        db.dispose()


def test_a_turn_waited_out_leaves_the_decision_to_sqlite(database_url):
    """Without its turn a writer still goes to SQLite, whose lock keeps the writes apart: the
    impatient writer gets the usual busy error and writes nothing."""
    holder = hold_turn_in_another_process(database_url, HOLD_SECONDS * 4)
    impatient = Database(database_url, busy_timeout_ms=50)
    try:
        with impatient.writer_turns.turn() as had_turn:
            assert not had_turn
        with pytest.raises(DatabaseBusyError):
            with impatient.write(retries=0) as conn:
                conn.exec_driver_sql("INSERT INTO items VALUES ('never')")
    finally:
        holder.wait(10)
        impatient.dispose()
    db = Database(database_url)
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM items").scalar() == 0
    db.dispose()


def test_only_the_turn_held_does_not_stop_a_writer(database_url):
    """A process holding the turn without SQLite's lock (it died mid-queue, say, or a tool that
    queues but writes nothing) delays a writer by at most the busy timeout."""
    holder = hold_turn_in_another_process(database_url, HOLD_SECONDS * 4, write=False)
    db = Database(database_url, busy_timeout_ms=100)
    try:
        with db.write() as conn:
            conn.exec_driver_sql("INSERT INTO items VALUES ('written anyway')")
    finally:
        holder.wait(10)
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM items").scalar() == 1
    db.dispose()


def test_a_killed_holder_gives_its_turn_back(database_url):
    holder = hold_turn_in_another_process(database_url, 60, write=False)
    turns = WriterTurns(Database(database_url).writer_turns.lock_path, wait_seconds=30)
    holder.kill()
    holder.wait(5)
    with turns.turn() as had_turn:
        assert had_turn, "waited the whole 30 s instead of getting the turn back with the process"


def test_threads_of_one_process_queue_like_processes(database_url):
    import threading

    db = Database(database_url)
    inside, overlaps = [0], []
    lock = threading.Lock()

    def writer(name):
        for i in range(20):
            with db.writer_turns.turn() as had_turn:
                assert had_turn
                with lock:
                    inside[0] += 1
                    overlaps.append(inside[0])
                time.sleep(0.001)
                with lock:
                    inside[0] -= 1
            with db.write() as conn:
                conn.exec_driver_sql("INSERT INTO items VALUES (?)", (f"{name}{i}",))

    threads = [threading.Thread(target=writer, args=(name,)) for name in "abc"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert max(overlaps) == 1, "two threads held the turn at once"
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM items").scalar() == 60
    db.dispose()


def wal_bytes(database_url: str) -> int:
    path = Path(sa.engine.make_url(database_url).database + "-wal")
    return path.stat().st_size if path.exists() else 0


def test_a_commit_never_checkpoints_inside_the_writer_turn(database_url):
    """SQLite's own checkpoint would run in the COMMIT that crosses its threshold (1,000 pages),
    while every other writer waits for the turn: the process checkpoints after its writes instead."""
    db = Database(database_url)
    with db.read() as conn:
        assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 0
    turn_free_at_checkpoint = []
    checkpoint = db.checkpoint

    def checkpoint_seeing_the_turn():
        with WriterTurns(db.writer_turns.lock_path, wait_seconds=0).turn() as had_turn:
            turn_free_at_checkpoint.append(had_turn)
        checkpoint()

    db.checkpoint = checkpoint_seeing_the_turn
    for i in range(CHECKPOINT_EVERY_WRITES * 2):
        with db.write() as conn:
            conn.exec_driver_sql("INSERT INTO items VALUES (?)", (f"item {i}",))
    assert turn_free_at_checkpoint == [True, True], "a checkpoint ran while the writer held its turn"
    db.dispose()


def test_the_write_ahead_log_stays_short_through_many_writes(database_url):
    """Checkpoints keep the log near one checkpoint's worth of writes: without them, 16 MB of
    writes leave 16 MB of log beside the file."""
    db = Database(database_url)
    for _ in range(CHECKPOINT_EVERY_WRITES * 8):
        with db.write() as conn:
            conn.exec_driver_sql("INSERT INTO items VALUES (?)", ("x" * 128 * 1024,))
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM items").scalar() == CHECKPOINT_EVERY_WRITES * 8
    assert wal_bytes(database_url) < 4 * 1024 * 1024, "the log grew with every write"
    db.dispose()
