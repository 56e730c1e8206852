"""The portal's connection to a libSQL server: Hrana 3 over HTTP, in as few requests as it allows.

The libSQL client (libsql_experimental) asks the server to describe every statement before running
it, so each statement costs two requests, and it offers no batch with bound values (its
`executescript` takes none). Counted through a proxy (bench/db_roundtrips.py): one email from the
relay to "accepted" cost 26 requests, a report page 20. Two things here instead:

- `HranaConnection`, a DB-API connection SQLAlchemy drives as it drives the client's: one request
  per statement, none to describe it, and a read's BEGIN sent with its first statement.
- `HranaEndpoint.run_batch`: a whole transaction in one request. A Hrana batch carries BEGIN, the
  statements and COMMIT, each step run only if the one before it succeeded, and a ROLLBACK that
  runs unless the COMMIT did: the server commits all of it or none (Database.write_steps).

A stream is a connection of the server's, and opening one is the dearest thing a request does
there: sqld reads the whole schema into a new connection (measured on the portal's schema: 1.6 to
2.2 ms of the server's CPU per request on a new stream, 0.46 to 0.56 on an open one). So a stream
outlives its transaction: when the server says it is back in autocommit it returns to the
endpoint's idle streams, and the next request of any connection of this process takes it. A stream
that still holds a transaction never does. The server expires an idle stream (10 s on sqld), and
refuses a request on it whole, before running any of it: such a request is sent again on a new
stream, and the older idle streams are forgotten with it.

Protocol: https://github.com/tursodatabase/libsql/blob/main/docs/HRANA_3_SPEC.md ("Hrana over
HTTP", "Batches", "Values").
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
import urllib3

CONNECT_SECONDS = 5.0
# A batch that waits for the server's write lock waits inside the request: long enough for the
# lock's own timeout (5 s on sqld) to answer first.
ANSWER_SECONDS = 30.0
# Idle streams kept for the next request: more than a process's connections use at once is waste.
IDLE_STREAMS = 16


class PipelineRefused(RuntimeError):
    """The server answered, and refused the request as a whole (a bad token, a malformed body)."""


class NotSent(ConnectionError):
    """The request never reached the server (refused or timed out while connecting)."""


class AnswerLost(ConnectionError):
    """The request may have reached the server, and no answer came back."""


class StepFailed(ValueError):
    """A statement failed (on the server's word). A ValueError, as the libSQL client raises."""


@dataclass(frozen=True)
class BatchAnswer:
    """What the server said about each step: a result, an error, or neither (skipped)."""

    results: list[dict | None]
    errors: list[dict | None]


class HranaCursor:
    """One statement's result, shaped as the driver's cursor (what `DriverResult` reads)."""

    __slots__ = ("description", "rowcount", "_rows")

    def __init__(self, result: dict):
        columns = result.get("cols") or []
        self.description = [(column["name"], None, None, None, None, None, None) for column in columns] or None
        self.rowcount = int(result.get("affected_row_count") or 0)
        self._rows = [tuple(_from_value(value) for value in row) for row in result.get("rows") or []]

    def fetchall(self) -> list[tuple]:
        return self._rows

    def close(self) -> None:
        self._rows = []


class HranaEndpoint:
    """One libSQL server's pipeline endpoint, with its token, over a pool of kept-alive connections."""

    def __init__(self, url: sa.engine.URL, auth_token: str | None):
        secure = str(url.query.get("secure", "false")).lower() in ("1", "true", "yes", "on")
        self.address = f"{'https' if secure else 'http'}://{url.host}{f':{url.port}' if url.port else ''}/v3/pipeline"
        self.session_statements: tuple[str, ...] = ()  # run first on each new stream: HranaConnection
        self.headers = {"Content-Type": "application/json"}
        if auth_token:
            self.headers["Authorization"] = f"Bearer {auth_token}"
        self.pool = urllib3.PoolManager(
            timeout=urllib3.Timeout(connect=CONNECT_SECONDS, read=ANSWER_SECONDS), retries=False
        )
        self._idle: list[str] = []  # batons of open streams in autocommit, the most recent last
        self._idle_lock = threading.Lock()

    def run_batch(self, steps: Sequence[tuple[str, tuple]], *, begin: str, end: str) -> BatchAnswer:
        """`begin`, the statements, then `end` (COMMIT): each step only if the one before it
        succeeded, then a ROLLBACK unless `end` succeeded. Raises NotSent, AnswerLost or
        PipelineRefused; a statement's failure is in the answer (`errors`)."""
        batch = [{"stmt": {"sql": begin}}]
        for sql, values in steps:
            batch.append(
                {
                    "stmt": {"sql": sql, "args": [_to_value(value) for value in values]},
                    "condition": {"type": "ok", "step": len(batch) - 1},
                }
            )
        end_step = len(batch)
        batch.append({"stmt": {"sql": end}, "condition": {"type": "ok", "step": end_step - 1}})
        batch.append(
            {"stmt": {"sql": "ROLLBACK"}, "condition": {"type": "not", "cond": {"type": "ok", "step": end_step}}}
        )
        answers, baton = self.send([{"type": "batch", "batch": {"steps": batch}}, {"type": "get_autocommit"}], None)
        self.release(baton, autocommit=_autocommit(answers[1:]))
        first = answers[0]
        if first.get("type") != "ok":
            raise PipelineRefused(_message(first.get("error")))
        result = first["response"]["result"]
        return BatchAnswer(results=result["step_results"], errors=result["step_errors"])

    def send(self, requests: list[dict], baton: str | None) -> tuple[list[dict], str | None]:
        """`requests` in one pipeline on the stream `baton` (a transaction's own), or with None on an
        idle stream or a new one (which first runs the session statements): the answers to
        `requests`, and the stream's next baton. The caller ends with `release` or keeps the baton."""
        if baton is not None:
            return self.pipeline(requests, baton)
        idle = self._take_idle()
        for stream in (idle, None) if idle else (None,):
            opening = [] if stream else [_execute(statement, ()) for statement in self.session_statements]
            try:
                answers, next_baton = self.pipeline([*opening, *requests], stream)
            except PipelineRefused:
                if stream is None:
                    raise
                # Refused whole, so nothing of it ran: most likely expired, as is every older one.
                self._forget_idle()
                continue
            for answer in answers[: len(opening)]:
                if answer.get("type") != "ok":
                    self.release(next_baton, autocommit=False)
                    raise StepFailed(_message(answer.get("error")))
            return answers[len(opening) :], next_baton
        raise AssertionError("unreachable")

    def release(self, baton: str | None, *, autocommit: bool) -> None:
        """A stream whose request is answered: kept for the next request if the server said it is in
        autocommit, otherwise closed, which rolls back whatever it holds."""
        if baton is None:
            return
        if autocommit:
            with self._idle_lock:
                if len(self._idle) < IDLE_STREAMS:
                    self._idle.append(baton)
                    return
        try:
            self.pipeline([{"type": "close"}], baton)
        except (PipelineRefused, ConnectionError):
            pass  # a stream the server cannot find holds nothing: it expires

    def _take_idle(self) -> str | None:
        with self._idle_lock:
            return self._idle.pop() if self._idle else None

    def _forget_idle(self) -> None:
        with self._idle_lock:
            self._idle.clear()

    def pipeline(self, requests: list[dict], baton: str | None = None) -> tuple[list[dict], str | None]:
        """One `POST /v3/pipeline`: the answer to each request, and the stream's baton for the next."""
        answer = self._post(json.dumps({"baton": baton, "requests": requests}))
        return answer.get("results") or [], answer.get("baton")

    def _post(self, body: str) -> dict:
        try:
            response = self.pool.request("POST", self.address, body=body.encode(), headers=self.headers)
        except (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ConnectTimeoutError) as error:
            raise NotSent(f"could not connect to the database server: {type(error).__name__}") from None
        except urllib3.exceptions.HTTPError as error:
            raise AnswerLost(f"no answer from the database server: {type(error).__name__}") from None
        if response.status != 200:
            # The server read the request and refused it whole: a pipeline runs nothing it refuses.
            raise PipelineRefused(f"the database server answered HTTP {response.status}: {_message(_json(response))}")
        try:
            return json.loads(response.data)
        except ValueError:
            raise AnswerLost("the database server's answer was unreadable") from None

    def close(self) -> None:
        self._forget_idle()  # the server expires them
        self.pool.clear()


class HranaConnection:
    """A DB-API connection to a libSQL server, for SQLAlchemy (Database passes it as `creator`).

    Hrana's streams are the server's connections: a transaction takes an idle stream of the
    endpoint (or a new one, which first runs the session statements, PRAGMA foreign_keys=ON) with
    its first request, and gives it back with its COMMIT or ROLLBACK once the server says it is in
    autocommit; a statement outside a transaction does both in one request. A read's BEGIN
    (DEFERRED) waits and goes with the first statement; BEGIN IMMEDIATE goes alone, so a busy write
    lock is met before any statement and retried (Database.write).

    Errors: a statement the server refused is a StepFailed (ValueError, as the libSQL client
    raises); a request that did not reach the server is NotSent, one without an answer AnswerLost
    (both ConnectionError: db.is_unreachable_error).
    """

    def __init__(self, endpoint: HranaEndpoint):
        self.endpoint = endpoint
        self.baton: str | None = None
        self.waiting_begin: str | None = None
        self._in_transaction = False
        self.isolation_level = None

    @property
    def in_transaction(self) -> bool:
        return self.waiting_begin is not None or self._in_transaction

    def cursor(self) -> HranaStatementCursor:
        return HranaStatementCursor(self)

    def execute(self, sql: str, parameters=()) -> HranaStatementCursor:
        return self.cursor().execute(sql, parameters)

    def commit(self) -> None:
        self._end("COMMIT")

    def rollback(self) -> None:
        self._end("ROLLBACK")

    def close(self) -> None:
        # A stream left inside a transaction is never given back: the server expires it, and its
        # transaction with it, which nothing of ours can commit any more.
        self.baton, self.waiting_begin, self._in_transaction = None, None, False

    def create_function(self, *args, **kwargs) -> None:
        """SQLAlchemy's SQLite dialect registers Python functions; a server cannot run them."""

    def run(self, sql: str, values: tuple) -> dict:
        """One statement (after a waiting BEGIN); its result."""
        if _is_begin(sql) and not self.in_transaction and sql.upper().split()[1:2] in ([], ["DEFERRED"]):
            self.waiting_begin = sql
            return {}
        statements = [(self.waiting_begin, ())] if self.waiting_begin else []
        statements.append((sql, values))
        requests = [_execute(statement, bound) for statement, bound in statements]
        requests.append({"type": "get_autocommit"})
        try:
            answers, baton = self.endpoint.send(requests, self.baton)
        except PipelineRefused as error:
            self.close()  # e.g. a stream the server expired: its transaction is gone with it
            raise StepFailed(str(error)) from None
        except (NotSent, AnswerLost):
            self.close()
            raise
        self.waiting_begin = None
        self._in_transaction = not _autocommit(answers[len(statements) :])
        # Back in autocommit (a statement outside any transaction, or one that ended it): the
        # stream is given back; inside a transaction it stays this connection's.
        self.baton = baton if self._in_transaction else None
        if not self._in_transaction:
            self.endpoint.release(baton, autocommit=True)
        for answer in answers[: len(statements)]:
            if answer.get("type") != "ok":
                raise StepFailed(_message(answer.get("error")))
        return answers[len(statements) - 1]["response"]["result"]

    def _end(self, sql: str) -> None:
        if self.waiting_begin is not None:
            self.waiting_begin = None  # nothing was sent: nothing to end
            return
        if self.baton is None:
            self._in_transaction = False
            return
        baton, self.baton, self._in_transaction = self.baton, None, False
        try:
            answers, baton = self.endpoint.send([_execute(sql, ()), {"type": "get_autocommit"}], baton)
        except PipelineRefused as error:
            raise StepFailed(str(error)) from None
        # A COMMIT that failed leaves its transaction open: that stream is closed, never given back.
        self.endpoint.release(baton, autocommit=_autocommit(answers[1:]))
        if answers and answers[0].get("type") != "ok":
            raise StepFailed(_message(answers[0].get("error")))


class HranaStatementCursor:
    """The DB-API cursor of a HranaConnection: every row is read with the answer."""

    arraysize = 1

    def __init__(self, connection: HranaConnection):
        self.connection = connection
        self.description = None
        self.rowcount = -1
        self.lastrowid = None
        self._rows: list[tuple] = []

    def execute(self, sql: str, parameters=()) -> HranaStatementCursor:
        result = self.connection.run(sql, tuple(parameters or ()))
        answer = HranaCursor(result)
        self.description, self._rows = answer.description, answer._rows
        self.rowcount = answer.rowcount if not answer.description else -1
        rowid = result.get("last_insert_rowid")
        self.lastrowid = int(rowid) if rowid is not None else None
        return self

    def executemany(self, sql: str, rows) -> HranaStatementCursor:
        total = 0
        for parameters in rows:
            self.execute(sql, parameters)
            total += max(self.rowcount, 0)
        self.rowcount = total
        return self

    def fetchone(self):
        return self._rows.pop(0) if self._rows else None

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        size = size or self.arraysize
        taken, self._rows = self._rows[:size], self._rows[size:]
        return taken

    def fetchall(self) -> list[tuple]:
        taken, self._rows = self._rows, []
        return taken

    def close(self) -> None:
        self._rows = []


def _is_begin(sql: str) -> bool:
    return sql.lstrip()[:5].upper() == "BEGIN"


def _execute(sql: str, values: tuple) -> dict:
    return {"type": "execute", "stmt": {"sql": sql, "args": [_to_value(value) for value in values], "want_rows": True}}


def _autocommit(answers: list[dict]) -> bool:
    """What the server said of its `get_autocommit` request (the first of `answers`): no answer is no."""
    status = answers[0] if answers else {}
    return status.get("type") == "ok" and bool(status["response"].get("is_autocommit"))


def _json(response) -> dict | None:
    try:
        return json.loads(response.data)
    except ValueError:
        return None


def _message(error: dict | None) -> str:
    # The server's words only: never the statement's values, which hold addresses.
    if not error:
        return "no detail"
    return str(error.get("message") or error.get("error") or error)[:300]


def _to_value(value) -> dict:
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool | int):
        return {"type": "integer", "value": str(int(value))}
    if isinstance(value, float):
        return {"type": "float", "value": value}
    if isinstance(value, bytes | bytearray | memoryview):
        return {"type": "blob", "base64": base64.b64encode(bytes(value)).decode().rstrip("=")}
    return {"type": "text", "value": str(value)}


def _from_value(value: dict):
    kind = value["type"]
    if kind == "null":
        return None
    if kind == "integer":
        return int(value["value"])
    if kind == "float":
        return float(value["value"])
    if kind == "blob":
        encoded = value["base64"]
        return base64.b64decode(encoded + "=" * (-len(encoded) % 4))
    return value["value"]
