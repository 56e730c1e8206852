"""The path every statement takes to the libSQL driver, and the hot statements that take it
directly.

`execute_on_driver` runs one statement on the driver's connection. SQLAlchemy's own execution
reaches it through the engine events `send_statements_through_driver` registers; `Statement`s,
BEGIN (portal/core/db.py) and migrations call it themselves. One path, so a libSQL server's stray
interrupt (see `execute_on_driver`) is stepped past wherever it lands.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

STRAY_INTERRUPT_RETRIES = 3


def execute_on_driver(dbapi_connection, sql: str, parameters=None, *, cursor=None):
    """Run one statement on the driver's connection and return its cursor.

    Through the libSQL client (an embedded replica's; a server is reached through hrana.py), a
    statement can fail with SQLITE_INTERRUPT that was meant for the statement before it. The client closes a query's HTTP answer as soon as it has read the last row, and
    when the server has not quite finished sending, it interrupts the SQLite connection; the flag
    outlives the finished query and stops the next statement while the server prepares it. Measured on a
    real sqld with the report's queries: about one read transaction in twenty failed, and an e2e
    report download failed about one run in three on a busy machine.

    Such a statement is repeated after a short statement has run: repeating it alone failed again
    each time, while after a `SELECT 1` (its step clears the flag) it went through, in 600 report
    reads out of 600. Only when the transaction is as it was: an interrupted INSERT, UPDATE or
    DELETE rolls back the whole transaction, and then nothing may be repeated (the error goes to
    the caller like any other).
    """
    cursor = cursor if cursor is not None else dbapi_connection.cursor()
    for attempt in range(STRAY_INTERRUPT_RETRIES + 1):
        was_in_transaction = dbapi_connection.in_transaction
        try:
            if parameters is None:
                cursor.execute(sql)
            else:
                cursor.execute(sql, parameters)
            return cursor
        except ValueError as error:
            still = dbapi_connection.in_transaction
            if attempt == STRAY_INTERRUPT_RETRIES or not may_repeat_after(error, was_in_transaction, still):
                raise
            _clear_interrupt(cursor)
    raise AssertionError("unreachable")


def may_repeat_after(error: BaseException, was_in_transaction: bool, is_in_transaction: bool) -> bool:
    """A statement stopped by a stray interrupt is repeated only if its transaction is unchanged."""
    return "SQLITE_INTERRUPT" in str(error) and was_in_transaction == is_in_transaction


def _clear_interrupt(cursor) -> None:
    try:
        cursor.execute("SELECT 1")
        cursor.fetchall()
    except ValueError as error:
        if "SQLITE_INTERRUPT" not in str(error):
            raise


def _execute_with_parameters(cursor, statement, parameters, context) -> bool:
    execute_on_driver(context.root_connection.connection.dbapi_connection, statement, parameters, cursor=cursor)
    return True


def _execute_without_parameters(cursor, statement, context) -> bool:
    execute_on_driver(context.root_connection.connection.dbapi_connection, statement, cursor=cursor)
    return True


def _execute_each(cursor, statement, parameters, context) -> bool:
    # One at a time, as the driver's own executemany does: repeating a whole executemany would
    # write its earlier rows twice.
    connection = context.root_connection.connection.dbapi_connection
    for row in parameters:
        execute_on_driver(connection, statement, row, cursor=cursor)
    return True


def send_statements_through_driver(engine: Engine) -> None:
    """Every statement SQLAlchemy runs on `engine` reaches the driver through execute_on_driver."""
    event.listen(engine, "do_execute", _execute_with_parameters)
    event.listen(engine, "do_execute_no_params", _execute_without_parameters)
    event.listen(engine, "do_executemany", _execute_each)


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
        cursor = execute_on_driver(conn.connection.dbapi_connection, self.sql, self.bind(values))
        return DriverResult(cursor)

    def bind(self, values) -> tuple:
        """The values in the order of the statement's placeholders."""
        return tuple(values[name] for name in self.names)


def run_steps(conn: Connection, steps) -> list[DriverResult]:
    """(statement, values) pairs, or a Steps, run in order on the caller's open transaction: their
    results. A write given whole that a local file runs (Database.write_steps), and the rare paths
    that decide between statements inside their own `db.write()`."""
    return [statement(conn, values) for statement, values in steps]


class Steps:
    """The statements of one transaction given whole (Database.write_steps), in order, the ones whose
    results are read each under a name: `steps.add("sealed", SEAL, values)`, then, once it ran,
    `written["sealed"].rowcount`. Steps nobody reads go in unnamed (`extend`). Never a position:
    a step added before another one would move every position after it."""

    def __init__(self):
        self.statements: list[tuple[Statement, Mapping]] = []
        self.positions: dict[str, int] = {}

    def add(self, name: str, statement: Statement, values: Mapping) -> Steps:
        if name in self.positions:
            raise ValueError(f"a step named {name!r} is already in this write")
        self.positions[name] = len(self.statements)
        self.statements.append((statement, values))
        return self

    def extend(self, steps) -> Steps:
        """Steps whose results nobody reads: (statement, values) pairs, or another Steps, whose
        names are kept."""
        if isinstance(steps, Steps):
            for name, position in steps.positions.items():
                if name in self.positions:
                    raise ValueError(f"a step named {name!r} is already in this write")
                self.positions[name] = len(self.statements) + position
            steps = steps.statements
        self.statements.extend(steps)
        return self

    def __iter__(self):
        return iter(self.statements)

    def __len__(self) -> int:
        return len(self.statements)

    def written(self, results: Sequence[DriverResult]) -> Written:
        return Written({name: results[position] for name, position in self.positions.items()})


class Written:
    """The results of a write's named steps, by name (Steps)."""

    def __init__(self, results: dict[str, DriverResult]):
        self._results = results

    def __getitem__(self, name: str) -> DriverResult:
        return self._results[name]

    def __contains__(self, name: str) -> bool:
        return name in self._results


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
