"""Writers take turns before they ask the database for its write lock: on a local file every process
on the machine (an advisory file lock), on a libSQL server the threads of one process."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class DatabaseBusyError(RuntimeError):
    """The write lock stayed busy through every retry; nothing was written."""


class WriterTurns:
    """Writers to one local database file, in every process on the machine, take turns on an
    advisory file lock (flock) beside it before they ask SQLite for its write lock.

    A writer whose turn is taken checks again after 0.1 ms, then a little later each time (at most
    every millisecond): SQLite's busy handler waits 1, 2, 5, 10 ms between its tries. Measured
    with bench/webhook_ingest.py, two gunicorn workers took no more receipts than one until
    writers queued here. The turn only orders writers: SQLite's lock still decides, so a writer
    that waited `wait_seconds` (the busy timeout) without its turn goes on to BEGIN IMMEDIATE and
    SQLite's own handling, and a writer that does not take turns (a migration tool, the sqlite3
    shell) is still safe. Each turn opens its own descriptor, so threads queue like processes,
    and a process that dies gives its turn back with its descriptors.
    """

    SUFFIX = "-writers"
    FIRST_PAUSE_SECONDS = 0.0001
    LONGEST_PAUSE_SECONDS = 0.001

    def __init__(self, lock_path: str, wait_seconds: float):
        self.lock_path, self.wait_seconds = lock_path, wait_seconds

    @contextmanager
    def turn(self) -> Iterator[bool]:
        """Yields whether the turn was had (False: waited it out, or no lock file could be opened)."""
        try:
            descriptor = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            yield False  # a read-only directory, say: SQLite's lock alone still keeps writes apart
            return
        try:
            yield self._wait_for_turn(descriptor)
        finally:
            os.close(descriptor)  # gives the turn back

    def _wait_for_turn(self, descriptor: int) -> bool:
        pause, deadline = self.FIRST_PAUSE_SECONDS, time.monotonic() + self.wait_seconds
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(pause)
                pause = min(pause * 1.5, self.LONGEST_PAUSE_SECONDS)


class ProcessWriterTurns:
    """Writers to a libSQL server (or through an embedded replica to its primary), in one process,
    take turns on a lock before they ask the server for its write lock.

    The libSQL client (an embedded replica's) keeps Python's GIL for the whole of each request. A thread whose BEGIN
    IMMEDIATE waits on the server for the write lock thus stops every other thread of its process,
    the one holding that lock among them, which needs the GIL to run its next statement or COMMIT:
    each waits on the other until the server takes the holder's transaction away (after 5 s, with
    TRANSACTION_TIMEOUT). Measured in a worker (its relay thread and its deliveries both write):
    every delivery of a run stalled that way once or more, and one of them, stalled four times, was
    handed to the dead-letter queue. Waiting here releases the GIL. (The portal's own connection,
    hrana.py, waits in urllib3, which releases it too; turns keep a process's writers in order.) The lock is shared by every
    Database on the same URL in the process; a writer that waited `wait_seconds` without its turn
    writes nothing (DatabaseBusyError), where going on could stop its own process again.
    """

    _locks: dict[str, threading.Lock] = {}
    _locks_guard = threading.Lock()

    def __init__(self, url: str, wait_seconds: float):
        with self._locks_guard:
            self.lock = self._locks.setdefault(url, threading.Lock())
        self.wait_seconds = wait_seconds

    @contextmanager
    def turn(self) -> Iterator[bool]:
        if not self.lock.acquire(timeout=self.wait_seconds):
            raise DatabaseBusyError("another write of this process held the database; nothing was written")
        try:
            yield True
        finally:
            self.lock.release()
