"""The one database helper: a libSQL engine and the two ways to open a transaction.

`Database.write()` takes SQLite's write lock up front (BEGIN IMMEDIATE), so a busy lock is met
before any statement runs and can be retried safely. Once statements have run, an error during
COMMIT is ambiguous (over a network the commit may have landed), so it is raised as
AmbiguousCommitError and never replayed as a fresh transaction.

On a local file, writers first queue for their turn (`WriterTurns`): SQLite's busy handler sleeps
1, 2, 5, 10 ms between tries, while a write here holds the lock for a few hundred microseconds,
so without a queue a waiting writer slept long after the lock was free. On a server, the writers
of one process take turns (`ProcessWriterTurns`), or two threads could wait on each other.

On a local file, SQLite's own checkpoint (copying the write-ahead log into the file, with two
fsyncs) would run inside the COMMIT that crosses its threshold, while the writer still holds its
turn and every other writer waits. Here each process checkpoints instead, after its own writes,
outside the turn: a PASSIVE checkpoint runs beside writers and readers and never waits for them.

On a libSQL server SQLAlchemy drives the portal's own connection (hrana.py), and `write_steps` /
`read_steps` send a whole transaction in one request. Every statement reaches the driver through
`driver.execute_on_driver`, which steps past a stray interrupt of the libSQL client's (see there).

On a local file an erasure leaves no copy: the file runs with `secure_delete`, so no freed byte
stays in it, and `flush_erased_pages` empties the write-ahead log. A libSQL server refuses that
pragma and VACUUM: a freed byte stays in its page, goes to the write-ahead log and the replication
log again with every later write of that page, and into the snapshots; `server_history.purge`
clears all of it while the server is stopped (docs/deploy.md, "Secrets and erased people").
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from portal.core import hrana
from portal.core.driver import (
    DriverResult,
    Statement,
    Steps,
    execute_on_driver,
    may_repeat_after,
    run_steps,
    send_statements_through_driver,
)
from portal.core.writer_turns import DatabaseBusyError, ProcessWriterTurns, WriterTurns

log = logging.getLogger(__name__)
BUSY_TIMEOUT_MS = 5000
# A process checkpoints after this many of its writes. A write of the engine's is 10 to 60 pages
# of log, so the log stays near SQLite's own threshold (1,000 pages) with a few writers.
CHECKPOINT_EVERY_WRITES = 16
LOCK_RETRIES = 4
# Tries to empty the write-ahead log after an erasure while reads are open (about 20 s in all).
FLUSH_TRIES = 25


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
        # A server (not a replica, whose writes its client forwards) takes a whole transaction in
        # one request: write_steps and read_steps.
        self.pipeline = None if self.is_local_file else hrana.HranaEndpoint(engine_url, turso_args.get("auth_token"))
        self.checkpoints_here = self.is_local_file and not self.is_replica and local_path not in (None, ":memory:")
        self._writes = itertools.count(1)
        if self.pipeline is not None:
            # Each stream is a connection of the server's: it needs the setting on every one.
            self.pipeline.session_statements = ("PRAGMA foreign_keys=ON",)
        # isolation_level=None hands transaction control to us, so BEGIN can be IMMEDIATE.
        self.engine: Engine = sa.create_engine(
            engine_url,
            connect_args={"isolation_level": None, **turso_args},
            # On a server, SQLAlchemy drives hrana.py's connection, not the libSQL client's.
            **({"creator": lambda: hrana.HranaConnection(self.pipeline)} if self.pipeline is not None else {}),
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
        if self.pipeline is not None:
            return  # the endpoint's session statements set up each of its streams
        cursor = dbapi_connection.cursor()
        if self.is_local_file and not self.is_replica:
            # The web server and the workers share one file: WAL lets readers run beside a writer.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA wal_autocheckpoint=0")  # checkpointed outside the writer turn: see above
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
        gone from both (a local file; a server's copies go with `server_history.purge`)."""
        if not self.is_local_file or self.is_replica:
            return
        connection = self.engine.raw_connection()  # outside any transaction, or it cannot checkpoint
        try:
            cursor = connection.cursor()
            # SQLite's own wait for readers keeps Python's lock (the libSQL driver holds it through
            # a statement), so a read in another thread of this process could never end meanwhile:
            # ask without waiting, and wait here, between tries, where other threads run.
            cursor.execute("PRAGMA busy_timeout=0")
            for attempt in range(FLUSH_TRIES):
                busy = cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0][0]
                if not busy:
                    return
                time.sleep(min(0.05 * 2**attempt, 1.0))
            log.error("the write-ahead log still holds erased pages: readers stayed for %d tries", FLUSH_TRIES)
        finally:
            connection.cursor().execute(
                f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}"
            )  # back to the pool as it was
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
        if self.checkpoints_here and next(self._writes) % CHECKPOINT_EVERY_WRITES == 0:
            self.checkpoint()

    def checkpoint(self) -> None:
        """Copy what the write-ahead log holds into the file, as far as no reader still needs it
        (PASSIVE: it waits for nobody; another process's checkpoint running already is enough)."""
        try:
            connection = self.engine.raw_connection()  # outside any transaction, or it cannot checkpoint
            try:
                connection.cursor().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            finally:
                connection.close()
        except Exception as error:  # noqa: BLE001  (the write before it is committed: it must not look failed)
            log.warning("checkpoint skipped: %s", type(error).__name__)

    def write_steps(
        self, steps: Sequence[tuple[Statement, Mapping]], *, retries: int = LOCK_RETRIES
    ) -> list[DriverResult]:
        """One write transaction of statements whose values are all known before the first runs,
        and their results. On a libSQL server that is one request (hrana.py) where `write()` costs
        one per statement and one for COMMIT; elsewhere it is `write()` running each in turn.

        Same promises as `write()`: a busy lock is retried before anything ran, nothing is written
        unless every statement succeeded, and a request whose answer was lost is an
        AmbiguousCommitError, never sent again."""
        if self.pipeline is None:
            with self.write(retries=retries) as conn:
                results = run_steps(conn, steps)
        else:
            with self._writer_turn():
                results = self._run_on_server(steps, begin="BEGIN IMMEDIATE", retries=retries, writes=True)
        return steps.written(results) if isinstance(steps, Steps) else results

    def write_steps_then_read(
        self, steps: Sequence[tuple[Statement, Mapping]], reads: Sequence[tuple[Statement, Mapping]]
    ) -> tuple[list[DriverResult], list[DriverResult]]:
        """`write_steps`, then `read_steps` of `reads`: the results of each. On a local file the
        reads run after the commit, outside the writer turn, so the next writer does not wait while
        they run; on a server both go in one request, the reads inside the transaction. The reads
        see the write or a later state: the caller checks what it relies on."""
        if self.pipeline is None:
            return self.write_steps(steps), self.read_steps(reads)
        results = self.write_steps([*steps, *reads])
        written = results[: len(steps)]
        return (steps.written(written) if isinstance(steps, Steps) else written), results[len(steps) :]

    def read_steps(self, steps: Sequence[tuple[Statement, Mapping]]) -> list[DriverResult]:
        """`read()` of these statements, and their results: one request on a libSQL server."""
        if self.pipeline is None:
            with self.read() as conn:
                return run_steps(conn, steps)
        return self._run_on_server(steps, begin="BEGIN DEFERRED", retries=LOCK_RETRIES, writes=False)

    def _run_on_server(self, steps, *, begin: str, retries: int, writes: bool) -> list[DriverResult]:
        bound = [(statement.sql, statement.bind(values)) for statement, values in steps]
        pause = 0.05
        for attempt in range(retries + 1):
            try:
                answer = self.pipeline.run_batch(bound, begin=begin, end="COMMIT")
            except hrana.NotSent as error:
                raise DatabaseUnavailable("the database server did not answer; nothing was written") from error
            except hrana.AnswerLost as error:
                if writes:
                    raise AmbiguousCommitError("could not confirm the transaction was committed") from error
                raise DatabaseUnavailable("the database server did not answer") from error
            # Steps: begin, the statements, COMMIT, then the ROLLBACK that runs unless COMMIT did.
            committed = answer.results[len(bound) + 1] is not None
            failure = next((error for error in answer.errors[: len(bound) + 2] if error), None)
            if committed and failure is None:
                return [DriverResult(hrana.HranaCursor(result)) for result in answer.results[1 : len(bound) + 1]]
            error = hrana.StepFailed((failure or {}).get("message", "a step of the transaction failed"))
            # Nothing was committed: a busy lock or a stray interrupt (driver.py) is tried again.
            if attempt == retries or not (is_busy_error(error) or may_repeat_after(error, False, False)):
                if is_busy_error(error):
                    raise DatabaseBusyError("the database stayed busy; nothing was written") from error
                raise error
            time.sleep(pause)
            pause *= 2
        raise AssertionError("unreachable")

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
        if self.pipeline is not None:
            self.pipeline.close()

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
