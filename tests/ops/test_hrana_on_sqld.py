"""The portal's own connection to a libSQL server (portal/core/hrana.py) against a real sqld, through
a proxy that counts requests and can lose an answer: a transaction of steps is one request and
lands whole or not at all, every stream enforces foreign keys, a stream outlives its transaction
but never one left open, a server that is down is "unavailable" with nothing written, and a lost
answer to a commit is never sent again."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from devtools.counting_proxy import CountingProxy
from devtools.sqld import SqldServer
from portal.core import hrana
from portal.core.db import AmbiguousCommitError, Database, DatabaseUnavailable
from portal.core.driver import Statement

INSERT = Statement("INSERT INTO things (name) VALUES (:name)")


@pytest.fixture
def server(tmp_path, sqld_keys):
    running = SqldServer(tmp_path / "data", sqld_keys).start()
    yield running
    running.stop()


@pytest.fixture
def proxy(server):
    running = CountingProxy(server.port).start()
    yield running
    running.stop()


@pytest.fixture
def db(server, proxy):
    database = Database(server.database_url().replace(f":{server.port}/", f":{proxy.port}/"))
    with database.write() as conn:
        conn.exec_driver_sql("CREATE TABLE owners (id INTEGER PRIMARY KEY)")
        conn.exec_driver_sql("CREATE TABLE things (name TEXT UNIQUE, owner_id INTEGER REFERENCES owners (id))")
    yield database
    database.dispose()


def names(db):
    with db.read() as conn:
        return conn.exec_driver_sql("SELECT name FROM things ORDER BY rowid").scalars().all()


def test_a_transaction_of_steps_is_one_request_and_lands_whole_or_not_at_all(db, proxy):
    before = proxy.requests()
    first, second = db.write_steps([(INSERT, {"name": "a"}), (INSERT, {"name": "b"})])
    assert proxy.requests() - before == 1
    assert first.rowcount == second.rowcount == 1
    with pytest.raises(ValueError, match="UNIQUE constraint failed") as failed:
        db.write_steps(
            [(INSERT, {"name": "c"}), (INSERT, {"name": "private-address@example.org"}), (INSERT, {"name": "a"})]
        )
    assert "private-address" not in str(failed.value), "an error never carries the statement's values"
    assert names(db) == ["a", "b"], "nothing of a failed transaction is written"


def test_every_stream_the_portal_opens_enforces_foreign_keys(db):
    # Each transaction is a stream of its own on the server, a connection of its own there.
    for _ in range(2):
        with pytest.raises(ValueError, match="FOREIGN KEY"):
            with db.write() as conn:
                conn.execute(sa.text("INSERT INTO things (name, owner_id) VALUES ('orphan', 7)"))
        with pytest.raises(ValueError, match="FOREIGN KEY"):
            db.write_steps([(Statement("INSERT INTO things (name, owner_id) VALUES ('orphan', 7)"), {})])
    assert names(db) == []


def test_a_transaction_sees_its_own_writes_and_others_see_them_after_its_commit(db):
    with db.write() as conn:
        conn.execute(sa.text("INSERT INTO things (name) VALUES ('mine')"))
        assert conn.execute(sa.text("SELECT name FROM things")).scalars().all() == ["mine"]
        assert names(db) == [], "not before the commit"
    assert names(db) == ["mine"]


def test_a_stream_outlives_its_transaction_so_the_server_opens_no_connection_per_request(db, proxy):
    # Opening a stream makes sqld read the whole schema into a new connection: 3 to 4 times the
    # server's CPU of a request on an open one (portal/core/hrana.py).
    names(db)
    before = proxy.new_streams()
    for name in ("a", "b", "c"):
        db.write_steps([(INSERT, {"name": name})])
        with db.write() as conn:
            conn.execute(sa.text("INSERT INTO things (name) VALUES (:name)"), {"name": name * 2})
        assert name in names(db)
    assert proxy.new_streams() - before == 0, "one idle stream served every transaction and read"


def test_a_transaction_left_open_never_serves_another_request(db):
    abandoned = hrana.HranaConnection(db.pipeline)
    abandoned.execute("BEGIN")
    assert abandoned.execute("SELECT count(*) FROM things").fetchall() == [(0,)], "its snapshot starts here"
    abandoned.close()  # as SQLAlchemy closes a connection it gave up on, its transaction open
    db.write_steps([(INSERT, {"name": "after"})])
    assert names(db) == ["after"], "a read inside the abandoned snapshot would not see it"


def test_a_stream_the_server_no_longer_knows_is_replaced_and_the_write_lands_once(server, db, proxy):
    names(db)  # leaves an idle stream, which the restart below makes unknown to the server
    server.stop()
    server.start()
    before = proxy.requests()
    db.write_steps([(INSERT, {"name": "once"})])
    assert proxy.requests() - before == 2, "refused whole on the stale stream, then sent on a new one"
    assert names(db) == ["once"]


def test_a_server_that_is_down_is_unavailable_and_nothing_is_written(server):
    db = Database(server.database_url())  # no proxy between: it would answer for the server
    with db.write() as conn:
        conn.exec_driver_sql("CREATE TABLE things (name TEXT UNIQUE)")
    server.stop()
    with pytest.raises(DatabaseUnavailable):
        db.write_steps([(INSERT, {"name": "while down"})])
    with pytest.raises(DatabaseUnavailable):
        with db.write() as conn:
            conn.execute(sa.text("INSERT INTO things (name) VALUES ('while down')"))
    with pytest.raises(DatabaseUnavailable):
        names(db)
    server.start()
    assert names(db) == []
    db.dispose()


def test_a_lost_answer_to_a_transaction_is_ambiguous_and_never_sent_again(db, proxy):
    proxy.drop_next_answer()
    before = proxy.requests()
    with pytest.raises(AmbiguousCommitError):
        db.write_steps([(INSERT, {"name": "maybe"})])
    assert proxy.requests() - before == 1, "the request whose answer was lost is not repeated"
    assert names(db) == ["maybe"], "the server did commit it: the portal must not assume it did not"


def test_a_lost_answer_to_a_commit_is_ambiguous(db, proxy):
    with pytest.raises(AmbiguousCommitError):
        with db.write() as conn:
            conn.execute(sa.text("INSERT INTO things (name) VALUES ('maybe')"))
            proxy.drop_next_answer()  # the next request is the COMMIT
    assert names(db) == ["maybe"]
