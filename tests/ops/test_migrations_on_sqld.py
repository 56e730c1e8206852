"""Migrations, reads and writes against a real libSQL server (sqld), where a statement's answer
streams back, the server can end a transaction on its own, and a finished answer can leave an
interrupt behind for the next statement."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from devtools.sqld import SqldServer
from portal.core import schema
from portal.core.db import Database
from portal.core.driver import may_repeat_after
from portal.reports.figures import MONTH_SUMS, per_volunteer_sql

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server(tmp_path, sqld_keys):
    running = SqldServer(tmp_path / "data", sqld_keys).start()
    yield running
    running.stop()


def test_a_migration_adding_checked_columns_to_a_large_schema_applies_on_a_server(tmp_path, server):
    # An ALTER TABLE that adds a CHECKed column re-checks the whole schema after its main step; on a
    # schema this size the server is still at it when an unread answer lets the next request in.
    directory = tmp_path / "migrations"
    directory.mkdir()
    tables = "".join(
        f"CREATE TABLE filler_{n} (id INTEGER PRIMARY KEY, name TEXT UNIQUE, kind TEXT CHECK (kind IN ('a', 'b')));\n"
        f"CREATE INDEX filler_{n}_kind ON filler_{n} (kind, name);\n"
        for n in range(250)
    )
    (directory / "0001_tables.sql").write_text("CREATE TABLE requests (id INTEGER PRIMARY KEY);\n" + tables)
    columns = "".join(
        f"ALTER TABLE requests ADD COLUMN state_{n} TEXT NOT NULL DEFAULT 'new' CHECK (state_{n} IN ('new', 'done'));\n"
        f"ALTER TABLE requests ADD COLUMN note_{n} TEXT NOT NULL DEFAULT '';\n"
        for n in range(6)
    )
    (directory / "0002_columns.sql").write_text(columns)
    db = Database(server.database_url())
    try:
        assert schema.upgrade(db, directory) == ["0001_tables.sql", "0002_columns.sql"]
        with db.read() as conn:
            names = [row[1] for row in conn.exec_driver_sql("PRAGMA table_info(requests)")]
        assert names == ["id"] + [f"{kind}_{n}" for n in range(6) for kind in ("state", "note")]
    finally:
        db.dispose()


# Another process's write: the writers of one process take turns before they reach the server.
INSERT_FROM_ANOTHER_PROCESS = """
import sys
import sqlalchemy as sa
from portal.core.db import Database
with Database(sys.argv[1]).write() as conn:
    conn.execute(sa.text("INSERT INTO things (name) VALUES ('other')"))
"""


def test_a_write_whose_transaction_the_server_took_away_reports_its_own_error(server):
    # sqld takes the write lock from a transaction idle for 5 s when another writer waits, and rolls
    # it back; the rollback the portal then asks for finds no transaction.
    holder = Database(server.database_url())
    try:
        with holder.write() as conn:
            conn.exec_driver_sql("CREATE TABLE things (name TEXT)")
        with pytest.raises(LookupError, match="the reason the write stopped"):
            with holder.write() as conn:
                conn.execute(sa.text("INSERT INTO things (name) VALUES ('half')"))
                other = [sys.executable, "-c", INSERT_FROM_ANOTHER_PROCESS, server.database_url()]
                subprocess.run(other, cwd=ROOT, check=True, timeout=60)
                raise LookupError("the reason the write stopped")
        insert(holder, "after")  # the pool hands out a working connection afterwards
        with holder.read() as conn:
            assert conn.exec_driver_sql("SELECT name FROM things ORDER BY rowid").scalars().all() == ["other", "after"]
    finally:
        holder.dispose()


def insert(db: Database, name: str) -> None:
    with db.write() as conn:
        conn.execute(sa.text("INSERT INTO things (name) VALUES (:name)"), {"name": name})


def test_report_reads_back_to_back_on_a_server_are_never_stopped_by_the_answer_before(server):
    # The report's shape: a few one-row sums, then a query whose parse takes a few milliseconds on
    # the portal's schema. Before execute_on_driver, about one transaction in twenty failed here
    # with SQLITE_INTERRUPT (and the e2e report download, one run in three on a busy machine).
    db = Database(server.database_url())
    try:
        schema.upgrade(db)
        window = {"company_id": 1, "start": "2026-01-01", "end": "2026-04-01"}
        bounds = {"programmes": '["language", "mentorship"]', "b1": "2026-02-01", "b2": "2026-03-01"}
        months = {"company_id": 1, "months": '[["2026-01-01", "2026-02-01"], ["2026-02-01", "2026-03-01"]]'}
        for _ in range(400):
            with db.read() as conn:
                sums = [conn.execute(MONTH_SUMS, months).scalars().all() for _ in range(3)]
                volunteers = conn.execute(per_volunteer_sql(3, members_only=True), {**window, **bounds}).all()
            assert sums == [["[0,0,0,0]", "[0,0,0,0]"]] * 3 and volunteers == []
    finally:
        db.dispose()


def test_writes_that_read_first_on_a_server_each_land_once(server):
    db = Database(server.database_url())
    try:
        schema.upgrade(db)
        with db.write() as conn:
            conn.exec_driver_sql("CREATE TABLE things (name TEXT)")
        months = {"company_id": 1, "months": '[["2026-01-01", "2026-02-01"]]'}
        for n in range(300):
            with db.write() as conn:
                conn.execute(MONTH_SUMS, months).one()
                conn.execute(sa.text("INSERT INTO things (name) VALUES (:name)"), {"name": f"thing {n}"})
        with db.read() as conn:
            names = conn.exec_driver_sql("SELECT name FROM things ORDER BY rowid").scalars().all()
        assert names == [f"thing {n}" for n in range(300)]
    finally:
        db.dispose()


def test_a_statement_whose_interrupt_ended_its_transaction_is_never_repeated():
    # An interrupted INSERT, UPDATE or DELETE rolls its whole transaction back: repeating it would
    # write it alone, outside the transaction that held the rest.
    interrupted = ValueError('stream error: Error { message: "interrupted", code: "SQLITE_INTERRUPT" }')
    assert may_repeat_after(interrupted, True, True) and may_repeat_after(interrupted, False, False)
    assert not may_repeat_after(interrupted, True, False)
    assert not may_repeat_after(ValueError("UNIQUE constraint failed: things.name"), True, True)


def test_two_threads_of_one_process_writing_to_a_server_both_commit(server):
    # The libSQL client keeps Python's GIL for the whole of each request. A thread whose BEGIN waits
    # on the server for the write lock would so stop the thread of its own process that holds that
    # lock, between two of its statements, until the server took the holder's transaction away (5 s).
    db = Database(server.database_url())
    try:
        with db.write() as conn:
            conn.exec_driver_sql("CREATE TABLE things (name TEXT)")
        holding, errors = threading.Event(), []

        def hold_then_insert():
            try:
                with db.write() as conn:
                    conn.execute(sa.text("INSERT INTO things (name) VALUES ('first')"))
                    holding.set()
                    time.sleep(0.5)  # Python work inside the transaction: it needs the GIL back
                    conn.execute(sa.text("INSERT INTO things (name) VALUES ('first, again')"))
            except Exception as error:
                errors.append(error)

        holder = threading.Thread(target=hold_then_insert)
        holder.start()
        assert holding.wait(timeout=10)
        insert(db, "second")
        holder.join(timeout=30)
        assert errors == []
        with db.read() as conn:
            names = conn.exec_driver_sql("SELECT name FROM things ORDER BY rowid").scalars().all()
        assert names == ["first", "first, again", "second"]
    finally:
        db.dispose()
