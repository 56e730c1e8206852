"""migrations/schema.sql is the schema the migrations add up to, regenerated and compared here."""

import re
import sqlite3

import sqlalchemy as sa

from portal.core import schema
from portal.core.db import Database
from portal.core.resources import MIGRATIONS_DIR


def test_the_readable_schema_matches_the_migrations():
    committed = (MIGRATIONS_DIR / schema.SCHEMA_FILE).read_text()
    assert committed == schema.readable_schema(), (
        f"migrations/{schema.SCHEMA_FILE} no longer matches migrations/: run `make schema` and commit the result"
    )


def test_the_readable_schema_builds_the_same_database_as_the_migrations(tmp_path):
    """Normalising the text for reading must not change what it says: run as SQL, the text makes
    the tables, indexes and triggers the migrations make, to the word."""
    migrated = Database(f"sqlite+libsql:///{tmp_path / 'migrated.db'}")
    schema.upgrade(migrated)
    from_text = Database(f"sqlite+libsql:///{tmp_path / 'from_text.db'}")
    with from_text.write() as conn:
        for statement in _statements(schema.readable_schema()):
            conn.exec_driver_sql(statement)
    try:
        assert _shape(from_text) == _shape(migrated)
    finally:
        migrated.dispose()
        from_text.dispose()


def test_a_migration_adding_a_column_shows_it_in_the_table(tmp_path):
    directory = tmp_path / "migrations"
    directory.mkdir()
    (directory / "0001_things.sql").write_text(
        "CREATE TABLE things (\n    id INTEGER PRIMARY KEY,  -- why\n    name TEXT NOT NULL\n);\n"
        "CREATE INDEX things_name ON things (name);\n"
    )
    (directory / "0002_colour.sql").write_text(
        "ALTER TABLE things ADD COLUMN colour TEXT CHECK (colour IN ('red', 'it''s, blue'));\n"
        "ALTER TABLE things ADD COLUMN size INTEGER;\n"
    )
    (directory / schema.SCHEMA_FILE).write_text("-- an old copy, never read as a migration\n")
    text = schema.readable_schema(directory)
    assert text.startswith(schema.SCHEMA_HEADER)
    assert text[len(schema.SCHEMA_HEADER) :] == (
        "\nCREATE TABLE things (\n"
        "    id INTEGER PRIMARY KEY,\n"
        "    name TEXT NOT NULL,\n"
        "    colour TEXT CHECK (colour IN ('red', 'it''s, blue')),\n"
        "    size INTEGER\n"
        ");\n"
        "\n"
        "CREATE INDEX things_name ON things (name);\n"
    )


def _statements(text):
    """The file's statements: a trigger's body holds semicolons, so a statement ends where SQLite
    says one is complete."""
    statements, current = [], ""
    for line in text.splitlines(keepends=True):
        if line.startswith("--"):
            continue
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    assert not current.strip()
    return statements


def _shape(db):
    """Every object with its SQL, whitespace squeezed out where it cannot matter (runs of it made
    one space, none beside a comma or a parenthesis): what SQLite runs, not how it is laid out."""
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT type, name, tbl_name, sql FROM sqlite_master"
                " WHERE tbl_name != 'schema_migrations' ORDER BY name"
            )
        ).all()
    return [
        (kind, name, table, sql and re.sub(r" ?([,()]) ?", r"\1", " ".join(sql.split())))
        for kind, name, table, sql in rows
    ]
