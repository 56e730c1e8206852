"""A stopped libSQL server's history, purged: what an erasure leaves on sqld, removed.

SQLite frees a deleted or replaced value's bytes without clearing them unless `secure_delete` is on,
and sqld refuses that pragma, and VACUUM, over its API ("unsupported statement"). Those bytes stay
in the database file's free space, and every page sqld writes also goes to its replication log
(`wallog`), which it compacts into snapshots it keeps for replicas. Measured on sqld 0.24.32: after
an erasure, its checkpoint and compaction, a deleted address was still in `data` and in a snapshot.

`purge(data_dir)` works on the files of a server that is not running: it folds the write-ahead log
into the database, rewrites the database with `secure_delete` (VACUUM: no free page, no stale byte
is carried over), and removes the replication log, its snapshots and whatever waits to be compacted.
sqld starts a new log from the database when it next starts; a replica of it starts over from a
snapshot of the new one.
"""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

NAMESPACE = Path("dbs") / "default"
HISTORY = ("wallog", "snapshots", "to_compact", "data-wal", "data-shm")


class PurgeRefused(RuntimeError):
    """Nothing was changed: the message says why."""


@dataclass(frozen=True)
class Purged:
    removed: list[str]  # what went, relative to the data directory
    bytes_before: int
    bytes_after: int


def purge(data_dir: Path) -> Purged:
    """Purge the history of the stopped sqld whose `--db-path` is `data_dir` (see the module)."""
    namespace = data_dir / NAMESPACE
    database = namespace / "data"
    if not database.is_file():
        raise PurgeRefused(f"{data_dir} is not a sqld data directory: it has no {NAMESPACE / 'data'}")
    if (namespace / ".sentinel").exists():
        # sqld writes it when it starts and removes it when it stops cleanly.
        raise PurgeRefused("sqld is running on this directory, or did not stop cleanly: stop it (SIGTERM) first")
    before = _size(data_dir)
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        connection.execute("PRAGMA secure_delete=ON")
        connection.execute("VACUUM")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        connection.close()
    removed = []
    for name in HISTORY:
        path = namespace / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        else:
            continue
        removed.append(str(NAMESPACE / name))
    return Purged(removed=removed, bytes_before=before, bytes_after=_size(data_dir))


def _size(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())
