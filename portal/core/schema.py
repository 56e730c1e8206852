"""Applies the numbered SQL files in migrations/, the one source of the schema.

Each applied file is recorded in `schema_migrations` with a SHA-256 of its content. Applying twice
changes nothing; a recorded file whose content changed since is refused, because the database
was built from the old text and silently skipping or re-running the new one would both lie.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from portal.core.db import Database
from portal.core.driver import execute_on_driver
from portal.core.resources import MIGRATIONS_DIR

FILENAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")

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
