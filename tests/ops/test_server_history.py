"""What an erasure leaves on a libSQL server, and the purge of a stopped server's history that
removes it (portal/core/server_history.py, `flask db purge-server-history`).

sqld refuses `PRAGMA secure_delete` and VACUUM, so a deleted row's bytes stay in the database's
free space, and its replication log and snapshots keep every page it wrote. The purge leaves no
byte of an erased person in any file of the server, and the server starts again with every row."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from devtools.sqld import SqldServer
from portal.core import server_history
from portal.core.db import Database

ADDRESS = "heidi.lindqvist@example.org"
NAME = "Heidi Lindqvist"


@pytest.fixture
def server(tmp_path, sqld_keys):
    # Its replication log compacts into a snapshot every second, as production's does hourly.
    running = SqldServer(tmp_path / "data", sqld_keys, log_seconds=1).start()
    yield running
    running.stop()


@pytest.fixture
def erased(server):
    """Colleagues, and a person erased as the portal erases: her address replaced, her rows gone."""
    db = Database(server.database_url())
    with db.write() as conn:
        conn.exec_driver_sql("CREATE TABLE people (id INTEGER PRIMARY KEY, email TEXT UNIQUE, name TEXT)")
        conn.exec_driver_sql("CREATE TABLE sessions (id INTEGER PRIMARY KEY, email TEXT, minutes INTEGER)")
        conn.exec_driver_sql("CREATE INDEX sessions_email ON sessions (email)")
        for number in range(400):
            conn.execute(
                sa.text("INSERT INTO people (email, name) VALUES (:email, :name)"),
                {"email": f"colleague{number}@example.org", "name": f"Colleague {number}"},
            )
        conn.execute(
            sa.text("INSERT INTO people (email, name) VALUES (:email, :name)"), {"email": ADDRESS, "name": NAME}
        )
        for number in range(800):
            conn.execute(
                sa.text("INSERT INTO sessions (email, minutes) VALUES (:email, 60)"),
                {"email": ADDRESS if number % 2 else f"colleague{number}@example.org"},
            )
    assert files_holding(server.data_dir, ADDRESS), "the server holds her before the erasure"
    with db.write() as conn:  # a snapshot of the log is made while she is still there
        conn.execute(sa.text("UPDATE people SET name = name WHERE email = :address"), {"address": ADDRESS})
    with db.write() as conn:
        conn.execute(
            sa.text("UPDATE people SET email = 'erased-1@erased.invalid', name = 'Former volunteer' WHERE email = :a"),
            {"a": ADDRESS},
        )
        conn.execute(sa.text("DELETE FROM sessions WHERE email = :address"), {"address": ADDRESS})
    with db.write() as conn:  # a later write of a page she was on carries her freed bytes again
        conn.execute(sa.text("UPDATE sessions SET minutes = 45 WHERE id = 1"))
    db.dispose()
    return server


def files_holding(data_dir: Path, *texts: str) -> list[str]:
    return sorted(
        str(path.relative_to(data_dir))
        for path in data_dir.rglob("*")
        if path.is_file() and any(text.encode() in path.read_bytes() for text in texts)
    )


def test_an_erasure_on_a_server_leaves_copies_that_the_purge_of_its_stopped_history_removes(erased):
    erased.stop()
    assert files_holding(erased.data_dir, ADDRESS, NAME, "lindqvist"), "without the purge, the server keeps her"

    purged = server_history.purge(erased.data_dir)

    assert files_holding(erased.data_dir, ADDRESS, NAME, "lindqvist") == []
    assert "dbs/default/wallog" in purged.removed
    erased.start()
    db = Database(erased.database_url())
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM people").scalar() == 401
        assert conn.exec_driver_sql("SELECT count(*) FROM sessions").scalar() == 400
    with db.write() as conn:
        conn.exec_driver_sql("INSERT INTO people (email, name) VALUES ('new@example.org', 'New')")
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM people").scalar() == 402
    db.dispose()


def test_the_purge_refuses_a_running_server_and_changes_nothing(erased):
    before = sorted(path for path in erased.data_dir.rglob("*") if path.is_file())
    with pytest.raises(server_history.PurgeRefused, match="stop it"):
        server_history.purge(erased.data_dir)
    assert sorted(path for path in erased.data_dir.rglob("*") if path.is_file()) == before


def test_the_purge_refuses_a_directory_that_is_no_server_of_ours(tmp_path):
    with pytest.raises(server_history.PurgeRefused, match="not a sqld data directory"):
        server_history.purge(tmp_path)


def test_the_command_purges_a_stopped_server_and_says_what_went(erased, runner):
    erased.stop()
    result = runner.invoke(args=["db", "purge-server-history", str(erased.data_dir)])
    assert result.exit_code == 0, result.output
    assert "removed dbs/default/wallog" in result.output
    assert "database rewritten" in result.output
    assert files_holding(erased.data_dir, ADDRESS, NAME) == []
