"""The one database helper: a libSQL engine and the two ways to open a transaction.

`Database.write()` takes SQLite's write lock up front (BEGIN IMMEDIATE), so a busy lock is met
before any statement runs and can be retried safely. Once statements have run, an error during
COMMIT is ambiguous (over a network the commit may have landed), so it is raised as
AmbiguousCommitError and never replayed as a fresh transaction.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

BUSY_TIMEOUT_MS = 5000
LOCK_RETRIES = 4


class DatabaseBusyError(RuntimeError):
    """The write lock stayed busy through every retry; nothing was written."""


class AmbiguousCommitError(RuntimeError):
    """COMMIT failed after statements ran: the change may or may not have been saved."""


def is_busy_error(error: BaseException) -> bool:
    text = str(getattr(error, "orig", None) or error).lower()
    return "database is locked" in text or "busy" in text


class Database:
    def __init__(self, url: str):
        self.url = url
        self.is_local_file = "://" in url and sa.engine.make_url(url).host in (None, "")
        engine_url, turso_args = turso_connect_args(sa.engine.make_url(url))
        # isolation_level=None hands transaction control to us, so BEGIN can be IMMEDIATE.
        self.engine: Engine = sa.create_engine(
            engine_url,
            connect_args={"isolation_level": None, **turso_args},
            # Errors must never carry bound values: they hold addresses and they reach logs and RQ.
            hide_parameters=True,
        )
        event.listen(self.engine, "connect", self._configure_connection)
        event.listen(self.engine, "begin", self._begin)

    def _configure_connection(self, dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        if self.is_local_file:
            # The web server and the workers share one file: WAL lets readers run beside a writer.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")

    @staticmethod
    def _begin(conn: Connection) -> None:
        # Straight to the driver: this runs for every transaction, and SQLAlchemy's statement
        # machinery would triple its cost.
        conn.connection.dbapi_connection.execute("BEGIN " + conn.info.pop("begin_mode", "DEFERRED"))

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            with conn.begin():
                yield conn

    @contextmanager
    def write(self, *, retries: int = LOCK_RETRIES) -> Iterator[Connection]:
        """One write transaction. Busy locks are retried before any statement runs."""
        with self.engine.connect() as conn:
            transaction = self._begin_immediate(conn, retries)
            try:
                yield conn
            except BaseException:
                transaction.rollback()
                raise
            try:
                transaction.commit()
            except Exception as error:
                # The connection's state is unknown too: never hand it back to the pool.
                conn.invalidate()
                raise AmbiguousCommitError("could not confirm the transaction was committed") from error

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


class Statement:
    """A hot statement, written with :named parameters and prepared once for the driver.

    For statements that run on every email or receipt while the write lock is held. They go
    straight to the driver's cursor inside the caller's `db.write()` / `db.read()` transaction:
    measured here, SQLAlchemy's execution path (`text()`, or even `exec_driver_sql`) spends 40-80 µs
    per statement building its result object, more than libSQL spends running an indexed UPDATE.
    The result (`DriverResult`) answers the few questions the hot paths ask. Everything else uses
    `text()`. Names inside quoted SQL literals must not look like parameters (none of ours do).
    """

    _NAME = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")

    def __init__(self, sql: str):
        self.names = tuple(self._NAME.findall(sql))
        self.sql = self._NAME.sub("?", sql)

    def __call__(self, conn: Connection, values: dict) -> DriverResult:
        if not conn.in_transaction():
            conn.begin()  # as SQLAlchemy's own execution would: never a statement outside a transaction
        cursor = conn.connection.dbapi_connection.execute(self.sql, tuple(values[name] for name in self.names))
        return DriverResult(cursor)


class DriverResult:
    """What a hot statement's caller reads: rows (by position, by name as attributes, or as
    mappings), the first column, or how many rows changed (a statement without RETURNING).

    Every row is read at once and the cursor closed: a statement left half-read would stop the
    transaction from committing (SQLite's "statements in progress").
    """

    __slots__ = ("rowcount", "_rows", "_row_class")
    _row_classes: dict[tuple[str, ...], type] = {}

    def __init__(self, cursor):
        self.rowcount: int = cursor.rowcount
        self._rows: list = []
        self._row_class = None
        if cursor.description:
            names = tuple(column[0] for column in cursor.description)
            self._row_class = self._row_classes.get(names) or self._row_classes.setdefault(names, _row_class(names))
            self._rows = cursor.fetchall()
        cursor.close()

    def first(self):
        return self._row_class(self._rows[0]) if self._rows else None

    def all(self) -> list:
        return [self._row_class(values) for values in self._rows]

    def scalar(self):
        return self._rows[0][0] if self._rows else None

    def scalars(self) -> list:
        return [values[0] for values in self._rows]

    def mappings(self) -> _Mappings:
        return _Mappings(self)


class _Mappings:
    __slots__ = ("_result",)

    def __init__(self, result: DriverResult):
        self._result = result

    def first(self) -> dict | None:
        row = self._result.first()
        return None if row is None else row._mapping

    def all(self) -> list[dict]:
        return [row._mapping for row in self._result.all()]


def _row_class(names: tuple[str, ...]) -> type:
    """A tuple of one row's values, readable by column name too (`row.status`, `row._mapping`),
    as SQLAlchemy's Row is; made once per column list."""
    index = {name: position for position, name in enumerate(names)}

    class DriverRow(tuple):
        __slots__ = ()
        _fields = names

        def __getattr__(self, name: str):
            try:
                return self[index[name]]
            except KeyError:
                raise AttributeError(name) from None

        @property
        def _mapping(self) -> dict:
            return dict(zip(names, self, strict=True))

    return DriverRow
