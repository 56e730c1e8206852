"""Applies the numbered SQL files in migrations/, the one source of the schema.

Each applied file is recorded in `schema_migrations` with a SHA-256 of its content. Applying twice
changes nothing; a recorded file whose content changed since is refused, because the database
was built from the old text and silently skipping or re-running the new one would both lie.

`migrations/schema.sql` is not a migration: it is the schema those files add up to, written by
`readable_schema` (`make schema`) for people to read, and never run.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from portal.core.db import Database
from portal.core.driver import execute_on_driver
from portal.core.resources import MIGRATIONS_DIR

FILENAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")

# The readable schema's file in migrations/: generated from the migrations, so never one of them.
SCHEMA_FILE = "schema.sql"

LEDGER_DDL = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    filename TEXT PRIMARY KEY,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
)
"""


class MigrationError(RuntimeError):
    pass


@dataclass(frozen=True)
class Migration:
    filename: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    migrations = []
    for path in sorted(directory.glob("*.sql")):
        if path.name == SCHEMA_FILE:
            continue
        if not FILENAME.match(path.name):
            raise MigrationError(f"{path.name}: migration files are named NNNN_description.sql")
        migrations.append(Migration(path.name, path.read_text()))
    return migrations


def upgrade(db: Database, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply every pending migration in order; return the names applied."""
    database_file = sa.engine.make_url(db.url).database
    if db.is_local_file and database_file:
        # A fresh machine has no instance/ folder yet, and libSQL does not create one.
        Path(database_file).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with db.write() as conn:
        conn.exec_driver_sql(LEDGER_DDL)
    if db.is_local_file and database_file:
        # libSQL creates the file under the process's umask, usually readable by every user; it holds
        # addresses and password hashes. SQLite gives its -wal and -shm files the database's mode.
        Path(database_file).chmod(0o600)
    applied_now = []
    for migration in discover(directory):
        with db.write() as conn:
            recorded = conn.execute(
                sa.text("SELECT checksum FROM schema_migrations WHERE filename = :f"),
                {"f": migration.filename},
            ).scalar()
            if recorded == migration.checksum:
                continue
            if recorded is not None:
                raise MigrationError(
                    f"{migration.filename} was changed after it was applied; "
                    "add a new migration instead of editing an applied one"
                )
            for statement in split_statements(migration.sql):
                run_to_the_end(conn, statement)
            conn.execute(
                sa.text("INSERT INTO schema_migrations (filename, checksum) VALUES (:f, :c)"),
                {"f": migration.filename, "c": migration.checksum},
            )
        applied_now.append(migration.filename)
    return applied_now


def run_to_the_end(conn: sa.Connection, statement: str) -> None:
    """Run one statement and wait until the database has finished it.

    libSQL's client returns from a statement on a server (sqld, Turso) as soon as its answer starts,
    and SQLAlchemy never reads the answer of DDL. The next request on the stream then interrupts the
    statement if the server is still at it (an ALTER TABLE that adds a CHECKed column re-checks the
    whole schema afterwards), the interrupt rolls the migration back, and the error surfaces one
    statement later. Reading the answer to its end waits for the server.
    """
    cursor = execute_on_driver(conn.connection.dbapi_connection, statement)
    try:
        cursor.fetchall()
    finally:
        cursor.close()


def split_statements(sql: str) -> list[str]:
    """Split a migration into statements; `--` comments are dropped first, whole lines and the ends
    of lines (a `--` inside a quoted string is kept).

    Migrations are plain DDL, so a semicolon at the end of a line's code ends a statement. A comment
    after it must not hide it: "ADD COLUMN x INTEGER;  -- why" once ran with the next statement
    glued on, and SQLite ran only the first (0021's index was never made).
    """
    lines = [_without_comment(line) for line in sql.splitlines()]
    statements, current = [], []
    for line in lines:
        current.append(line)
        if line.rstrip().endswith(";"):
            statement = "\n".join(current).strip().rstrip(";").strip()
            if statement:
                statements.append(statement)
            current = []
    tail = "\n".join(current).strip()
    if tail:
        statements.append(tail)
    return statements


def _without_comment(line: str) -> str:
    """The line up to its first `--` outside single quotes."""
    quoted = False
    for index, char in enumerate(line):
        if char == "'":
            quoted = not quoted
        elif not quoted and line.startswith("--", index):
            return line[:index]
    return line


SCHEMA_HEADER = """\
-- The schema as the migrations leave it, for reading: every table with its indexes and triggers,
-- tables in alphabetical order, views last. Generated by `make schema` (devtools/schema_file.py) from
-- a fresh database migrated with every file in migrations/: do not edit it by hand. migrations/ stays
-- the one source the database is built from, in production and in the tests; this file is never run.
-- tests/test_schema_file.py fails when it no longer matches the migrations. SQLite keeps no comments:
-- why a column or an index is there is said in the migration that adds it (grep migrations/).
"""


def readable_schema(directory: Path = MIGRATIONS_DIR) -> str:
    """The schema the migrations in `directory` add up to, as one SQL file a person reads.

    A fresh temporary libSQL file is migrated by `upgrade`, the runner production uses, and its
    sqlite_master is written out. Left out: SQLite's own objects (sqlite_sequence, and the indexes it
    makes for UNIQUE and PRIMARY KEY, which the table's text already shows), and the runner's ledger
    schema_migrations: no migration creates it (LEDGER_DDL above), and it records which files ran,
    not what the portal stores.
    """
    with tempfile.TemporaryDirectory() as folder:
        db = Database(f"sqlite+libsql:///{Path(folder) / 'schema.db'}")
        try:
            upgrade(db, directory)
            with db.read() as conn:
                rows = conn.execute(
                    sa.text(
                        "SELECT type, name, tbl_name, sql FROM sqlite_master"
                        " WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                        " AND tbl_name != 'schema_migrations'"
                    )
                ).all()
        finally:
            db.dispose()
    rows.sort(key=lambda row: row.name)
    parts = [SCHEMA_HEADER]
    for kind in ("table", "view"):
        for owner in (row for row in rows if row.type == kind):
            parts.append(_readable_table(owner.sql) if kind == "table" else _tidy(owner.sql))
            indexes = [_tidy(row.sql) for row in rows if row.type == "index" and row.tbl_name == owner.name]
            if indexes:
                parts.append("\n".join(indexes))
            parts.extend(_tidy(row.sql) for row in rows if row.type == "trigger" and row.tbl_name == owner.name)
    return "\n\n".join(part.rstrip("\n") for part in parts) + "\n"


def _readable_table(sql: str) -> str:
    """A CREATE TABLE with one column or table constraint a line, each ending in its comma.

    SQLite keeps the text the table was created with (less the migrations' comments, which the
    runner drops), and ALTER TABLE ADD COLUMN splices each new column in after the last one, on the
    same line. Cutting the list at its top-level commas and re-indenting puts every column on a line
    of its own; a definition the migration wrote over several lines keeps its line breaks. Nothing
    inside a quoted string or name is touched, so a table rebuilt and renamed keeps the quotes SQLite
    put round its new name (`CREATE TABLE "email_outbox"`).
    """
    opening = next(index for index in _cuts(sql, lambda char, depth: char == "(" and depth == 0))
    closing = next(index for index in _cuts(sql, lambda char, depth: char == ")" and depth == 1) if index > opening)
    items = []
    for item in _cut(sql[opening + 1 : closing], lambda char, depth: char == "," and depth == 0):
        lines = [line.strip() for line in _cut(item, lambda char, depth: char == "\n") if line.strip()]
        items.append("    " + "\n        ".join(lines))
    head = " ".join(sql[:opening].split())
    tail = " ".join(sql[closing + 1 :].split())
    return f"{head} (\n" + ",\n".join(items) + "\n)" + (f" {tail}" if tail else "") + ";"


def _tidy(sql: str) -> str:
    """An index, trigger or view as written, without the spaces a dropped comment left at line ends."""
    return "\n".join(line.rstrip() for line in _cut(sql.strip(), lambda char, depth: char == "\n")) + ";"


def _cut(text: str, at) -> list[str]:
    """`text` cut at each character outside quotes for which at(char, depth) holds; the cuts dropped."""
    pieces, start = [], 0
    for index in _cuts(text, at):
        pieces.append(text[start:index])
        start = index + 1
    return [*pieces, text[start:]]


def _cuts(text: str, at):
    """Where at(char, depth) holds for a character outside quotes; depth counts the parentheses
    open before it."""
    depth, quote = 0, None
    for index, char in enumerate(text):
        if quote:
            if char == quote:  # a doubled quote ('it''s') closes and reopens: the same in the end
                quote = None
            continue
        if char in "'\"`":
            quote = char
            continue
        if char == "[":
            quote = "]"
            continue
        if at(char, depth):
            yield index
        depth += (char == "(") - (char == ")")
