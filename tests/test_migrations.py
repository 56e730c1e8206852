import pytest
import sqlalchemy as sa

from portal.core import schema
from portal.core.db import Database


def test_upgrade_twice_changes_nothing(tmp_path):
    db = Database(f"sqlite+libsql:///{tmp_path / 'fresh.db'}")
    first = schema.upgrade(db)
    assert first == [m.filename for m in schema.discover()]

    def sqlite_master():
        with db.read() as conn:
            return conn.execute(sa.text("SELECT type, name, sql FROM sqlite_master ORDER BY name")).all()

    before = sqlite_master()
    assert schema.upgrade(db) == []
    assert sqlite_master() == before
    db.dispose()


def test_changed_migration_is_refused(tmp_path):
    directory = tmp_path / "migrations"
    directory.mkdir()
    (directory / "0001_first.sql").write_text("CREATE TABLE things (id INTEGER PRIMARY KEY);\n")
    db = Database(f"sqlite+libsql:///{tmp_path / 'db.db'}")
    assert schema.upgrade(db, directory) == ["0001_first.sql"]

    (directory / "0001_first.sql").write_text("CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT);\n")
    (directory / "0002_second.sql").write_text("CREATE TABLE others (id INTEGER PRIMARY KEY);\n")
    with pytest.raises(schema.MigrationError, match="0001_first.sql was changed"):
        schema.upgrade(db, directory)
    with db.read() as conn:
        tables = {row[0] for row in conn.execute(sa.text("SELECT name FROM sqlite_master WHERE type='table'"))}
    assert "others" not in tables, "nothing after the refused file may be applied"
    db.dispose()


def test_failed_migration_leaves_no_trace(tmp_path):
    directory = tmp_path / "migrations"
    directory.mkdir()
    (directory / "0001_broken.sql").write_text("CREATE TABLE a (id INTEGER PRIMARY KEY);\nCREATE TABLE nonsense (;\n")
    db = Database(f"sqlite+libsql:///{tmp_path / 'db.db'}")
    with pytest.raises((sa.exc.DBAPIError, ValueError)):  # libSQL reports a syntax error as ValueError
        schema.upgrade(db, directory)
    with db.read() as conn:
        tables = {row[0] for row in conn.execute(sa.text("SELECT name FROM sqlite_master WHERE type='table'"))}
        ledger = conn.execute(sa.text("SELECT COUNT(*) FROM schema_migrations")).scalar()
    assert "a" not in tables and ledger == 0
    db.dispose()


def test_cli_upgrade_reports_up_to_date(runner):
    result = runner.invoke(args=["db", "upgrade"])
    assert result.exit_code == 0
    assert "up to date" in result.output


def test_local_database_uses_wal(db):
    with db.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_the_database_file_is_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "instance" / "portal.db"
    db = Database(f"sqlite+libsql:///{path}")
    schema.upgrade(db)
    db.dispose()
    assert path.stat().st_mode & 0o077 == 0
    assert path.parent.stat().st_mode & 0o077 == 0


def test_a_comment_after_a_statement_does_not_glue_the_next_one_to_it():
    sql = (
        "-- a whole-line comment\n"
        "ALTER TABLE t ADD COLUMN x INTEGER;  -- why x\n"
        "\n"
        "CREATE INDEX t_x ON t (x) WHERE x IS NOT NULL;\n"
        "INSERT INTO t (note) VALUES ('a -- kept; inside quotes');\n"
    )
    assert schema.split_statements(sql) == [
        "ALTER TABLE t ADD COLUMN x INTEGER",
        "CREATE INDEX t_x ON t (x) WHERE x IS NOT NULL",
        "INSERT INTO t (note) VALUES ('a -- kept; inside quotes')",
    ]


def test_every_index_a_migration_creates_exists(db):
    """A statement that never ran leaves no error behind: compare what the migrations ask for with
    what the database has."""
    import re

    wanted = {
        name
        for migration in schema.discover()
        for statement in schema.split_statements(migration.sql)
        for name in re.findall(r"CREATE (?:UNIQUE )?INDEX (?:IF NOT EXISTS )?(\w+)", statement)
    }
    dropped = {
        name
        for migration in schema.discover()
        for statement in schema.split_statements(migration.sql)
        for name in re.findall(r"DROP INDEX (?:IF EXISTS )?(\w+)", statement)
    }
    with db.read() as conn:
        present = set(conn.execute(sa.text("SELECT name FROM sqlite_master WHERE type = 'index'")).scalars())
    assert wanted - dropped <= present, wanted - dropped - present


def test_a_batch_answer_logged_as_a_sentence_becomes_its_code(tmp_path):
    """0042: an accepted request logged by an earlier release reads as every new one does."""
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    for migration in sorted(schema.MIGRATIONS_DIR.glob("0*.sql")):
        if migration.name < "0042":
            (earlier / migration.name).write_text(migration.read_text())
    db = Database(f"sqlite+libsql:///{tmp_path / 'portal.db'}")
    schema.upgrade(db, earlier)
    with db.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO email_batches (id, family, provider_key, created_at, updated_at) "
            "VALUES ('bat_1', 'campaign', 'k', '2026-01-01', '2026-01-01')"
        )
        for number, answer in ((1, "429: rate_limited: rate_limit_exceeded"), (2, "accepted: 3 message IDs")):
            conn.exec_driver_sql(
                "INSERT INTO email_batch_requests (batch_id, number, provider_key, size, requested_at, answer) "
                f"VALUES ('bat_1', {number}, 'k', 3, '2026-01-01', '{answer}')"
            )
    assert schema.upgrade(db)[0] == "0042_batch_answer_codes.sql"  # later migrations follow it
    with db.read() as conn:
        answers = conn.exec_driver_sql("SELECT answer FROM email_batch_requests ORDER BY number").scalars().all()
    assert answers == ["429: rate_limited: rate_limit_exceeded", "accepted"]
    db.dispose()
