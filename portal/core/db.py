"""The one database helper: a libSQL engine and the two ways to open a transaction.

`Database.write()` takes SQLite's write lock up front (BEGIN IMMEDIATE), so a busy lock is met
before any statement runs and can be retried safely. Once statements have run, an error during
COMMIT is ambiguous (over a network the commit may have landed), so it is raised as
AmbiguousCommitError and never replayed as a fresh transaction.

On a local file, writers first queue for their turn (`WriterTurns`): SQLite's busy handler sleeps
1, 2, 5, 10 ms between tries, while a write here holds the lock for a few hundred microseconds,
so without a queue a waiting writer slept long after the lock was free. On a server, the writers
of one process take turns (`ProcessWriterTurns`), or two threads could wait on each other.

Every statement reaches the driver through `driver.execute_on_driver`, which steps past a libSQL
server's stray interrupt (see there).
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from portal.core.driver import execute_on_driver, send_statements_through_driver

BUSY_TIMEOUT_MS = 5000
LOCK_RETRIES = 4


class DatabaseBusyError(RuntimeError):
    """The write lock stayed busy through every retry; nothing was written."""


class AmbiguousCommitError(RuntimeError):
    """COMMIT failed after statements ran: the change may or may not have been saved."""


class DatabaseUnavailable(RuntimeError):
    """The database server did not answer before any commit was asked: nothing was written."""


def is_unreachable_error(error: BaseException) -> bool:
    """The libSQL client could not reach its server (it raises ValueError("Hrana: `http error ..."))."""
    text = str(getattr(error, "orig", None) or error).lower()
    return isinstance(error, ConnectionError) or "http error" in text or "connection refused" in text


def is_busy_error(error: BaseException) -> bool:
    text = str(getattr(error, "orig", None) or error).lower()
    return "database is locked" in text or "busy" in text


class Database:
    def __init__(self, url: str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS):
        self.url = url
        self.busy_timeout_ms = busy_timeout_ms
        self.is_local_file = "://" in url and sa.engine.make_url(url).host in (None, "")
        engine_url, turso_args = turso_connect_args(sa.engine.make_url(url))
        # An embedded replica's writes go to its primary: only a plain local file queues on the
        # file, and only a plain file takes file pragmas (libSQL refuses journal_mode on a replica).
        self.is_replica = self.is_local_file and "sync_url" in turso_args
        local_path = engine_url.database if self.is_local_file and not turso_args else None
        if local_path == ":memory:":
            self.writer_turns = None
        elif local_path:
            self.writer_turns = WriterTurns(local_path + WriterTurns.SUFFIX, busy_timeout_ms / 1000)
        else:
            self.writer_turns = ProcessWriterTurns(url, busy_timeout_ms / 1000)
        # isolation_level=None hands transaction control to us, so BEGIN can be IMMEDIATE.
        self.engine: Engine = sa.create_engine(
            engine_url,
            connect_args={"isolation_level": None, **turso_args},
            # The dialect gives a server URL one connection per thread (SingletonThreadPool), so a
            # read opened beside a write on the same thread would run inside that write's transaction.
            # A pool of separate connections behaves on a server as it does on a file.
            poolclass=sa.pool.QueuePool,
            # Errors must never carry bound values: they hold addresses and they reach logs and RQ.
            hide_parameters=True,
        )
        event.listen(self.engine, "connect", self._configure_connection)
        event.listen(self.engine, "begin", self._begin)
        send_statements_through_driver(self.engine)

    def _configure_connection(self, dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        if self.is_local_file and not self.is_replica:
            # The web server and the workers share one file: WAL lets readers run beside a writer.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
            cursor.execute("PRAGMA synchronous=NORMAL")
            # Deleted and overwritten content is zeroed, not left in free pages: an erased person's
            # address must not stay readable in the file (portal/privacy/operations.py).
            cursor.execute("PRAGMA secure_delete=ON")
        cursor.execute("PRAGMA foreign_keys=ON")

    @staticmethod
    def _begin(conn: Connection) -> None:
        # Straight to the driver: this runs for every transaction, and SQLAlchemy's statement
        # machinery would triple its cost.
        execute_on_driver(conn.connection.dbapi_connection, "BEGIN " + conn.info.pop("begin_mode", "DEFERRED"))

    def flush_erased_pages(self) -> None:
        """Move the write-ahead log into the file and empty it, so pages that held erased data are
        gone from both (a local file; a server keeps its own log, see docs/deploy.md)."""
        if not self.is_local_file or self.is_replica:
            return
        connection = self.engine.raw_connection()  # outside any transaction, or it cannot checkpoint
        try:
            connection.cursor().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            connection.close()

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with _unreachable_as_unavailable():
            with self.engine.connect() as conn:
                with conn.begin():
                    yield conn

    @contextmanager
    def write(self, *, retries: int = LOCK_RETRIES) -> Iterator[Connection]:
        """One write transaction. Busy locks are retried before any statement runs."""
        with self._writer_turn(), _unreachable_as_unavailable(), self.engine.connect() as conn:
            transaction = self._begin_immediate(conn, retries)
            try:
                yield conn
            except BaseException as error:
                if is_unreachable_error(error):
                    conn.invalidate()  # no rollback can reach the server; without a commit nothing lands
                else:
                    _roll_back(conn, transaction)
                raise
            try:
                transaction.commit()
            except Exception as error:
                # The connection's state is unknown too: never hand it back to the pool.
                conn.invalidate()
                raise AmbiguousCommitError("could not confirm the transaction was committed") from error

    def _writer_turn(self):
        return self.writer_turns.turn() if self.writer_turns else nullcontext(False)

    @staticmethod
    def _begin_immediate(conn: Connection, retries: int):
        pause = 0.05
        for attempt in range(retries + 1):
            conn.info["begin_mode"] = "IMMEDIATE"
            try:
                return conn.begin()
            except Exception as error:
                if not is_busy_error(error) or attempt == retries:
                    if is_busy_error(error):
                        raise DatabaseBusyError("the database stayed busy; nothing was written") from error
                    raise
                conn.rollback()
                time.sleep(pause)
                pause *= 2
        raise AssertionError("unreachable")

    def dispose(self) -> None:
        self.engine.dispose()

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1").scalar()


def _roll_back(conn: Connection, transaction) -> None:
    """Undo a failed write. A server may have ended the transaction itself (an interrupted statement
    rolls it back), so the rollback can fail too: the person must see the first error, not that one."""
    try:
        transaction.rollback()
    except Exception:
        conn.invalidate()


@contextmanager
def _unreachable_as_unavailable() -> Iterator[None]:
    """A server that does not answer, before any commit, is DatabaseUnavailable: safe to retry."""
    try:
        yield
    except (AmbiguousCommitError, DatabaseBusyError):
        raise
    except Exception as error:
        if is_unreachable_error(error):
            raise DatabaseUnavailable("the database server did not answer; nothing was written") from error
        raise


class WriterTurns:
    """Writers to one local database file, in every process on the machine, take turns on an
    advisory file lock (flock) beside it before they ask SQLite for its write lock.

    A writer whose turn is taken checks again after 0.1 ms, then a little later each time (at most
    every millisecond): SQLite's busy handler waits 1, 2, 5, 10 ms between its tries. Measured
    with bench/webhook_ingest.py, two gunicorn workers took no more receipts than one until
    writers queued here. The turn only orders writers: SQLite's lock still decides, so a writer
    that waited `wait_seconds` (the busy timeout) without its turn goes on to BEGIN IMMEDIATE and
    SQLite's own handling, and a writer that does not take turns (a migration tool, the sqlite3
    shell) is still safe. Each turn opens its own descriptor, so threads queue like processes,
    and a process that dies gives its turn back with its descriptors.
    """

    SUFFIX = "-writers"
    FIRST_PAUSE_SECONDS = 0.0001
    LONGEST_PAUSE_SECONDS = 0.001

    def __init__(self, lock_path: str, wait_seconds: float):
        self.lock_path, self.wait_seconds = lock_path, wait_seconds

    @contextmanager
    def turn(self) -> Iterator[bool]:
        """Yields whether the turn was had (False: waited it out, or no lock file could be opened)."""
        try:
            descriptor = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            yield False  # a read-only directory, say: SQLite's lock alone still keeps writes apart
            return
        try:
            yield self._wait_for_turn(descriptor)
        finally:
            os.close(descriptor)  # gives the turn back

    def _wait_for_turn(self, descriptor: int) -> bool:
        pause, deadline = self.FIRST_PAUSE_SECONDS, time.monotonic() + self.wait_seconds
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(pause)
                pause = min(pause * 1.5, self.LONGEST_PAUSE_SECONDS)


class ProcessWriterTurns:
    """Writers to a libSQL server (or through an embedded replica to its primary), in one process,
    take turns on a lock before they ask the server for its write lock.

    The libSQL client keeps Python's GIL for the whole of each request. A thread whose BEGIN
    IMMEDIATE waits on the server for the write lock thus stops every other thread of its process,
    the one holding that lock among them, which needs the GIL to run its next statement or COMMIT:
    each waits on the other until the server takes the holder's transaction away (after 5 s, with
    TRANSACTION_TIMEOUT). Measured in a worker (its relay thread and its deliveries both write):
    every delivery of a run stalled that way once or more, and one of them, stalled four times, was
    handed to the dead-letter queue. Waiting here releases the GIL. The lock is shared by every
    Database on the same URL in the process; a writer that waited `wait_seconds` without its turn
    writes nothing (DatabaseBusyError), where going on could stop its own process again.
    """

    _locks: dict[str, threading.Lock] = {}
    _locks_guard = threading.Lock()

    def __init__(self, url: str, wait_seconds: float):
        with self._locks_guard:
            self.lock = self._locks.setdefault(url, threading.Lock())
        self.wait_seconds = wait_seconds

    @contextmanager
    def turn(self) -> Iterator[bool]:
        if not self.lock.acquire(timeout=self.wait_seconds):
            raise DatabaseBusyError("another write of this process held the database; nothing was written")
        try:
            yield True
        finally:
            self.lock.release()


# Options the libSQL client takes as arguments, which DATABASE_URL carries as query parameters
# (docs/deploy.md): the client itself would send `authToken` in the query string of every request
# with an empty bearer, and would take `sync_url` as part of a local file's name.
_TURSO_QUERY = {"authToken": "auth_token", "sync_url": "sync_url", "sync_interval": "sync_interval"}


def turso_connect_args(url: sa.engine.URL) -> tuple[sa.engine.URL, dict]:
    """The URL without the Turso options, and those options as the client's keyword arguments."""
    args = {name: url.query[key] for key, name in _TURSO_QUERY.items() if key in url.query}
    if "sync_interval" in args:
        args["sync_interval"] = float(args["sync_interval"])
    return url.difference_update_query(list(_TURSO_QUERY)), args


def json_array(values) -> str:
    """A list bound as ONE parameter, read in SQL as `IN (SELECT value FROM json_each(:name))`.

    One statement text for any length: no per-call SQL building, no limit on bound variables.
    """
    return json.dumps(list(values))


def json_rows(rows) -> str:
    """Many rows bound as ONE parameter, for one statement that writes them all:
    `INSERT ... SELECT r.value ->> '$.column', ... FROM json_each(:rows) AS r WHERE true`.

    On a libSQL server every statement is a request: 20 invitations written one statement each
    cost 20 of them, written this way one. json_each walks the array in order, so the rows get
    rowids in the order given. Values are JSON's: text, numbers, NULL (no bytes).
    """
    return json.dumps(list(rows))
