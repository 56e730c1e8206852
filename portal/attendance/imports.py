"""Attendance from a CSV file: the API's rules, for files of any length, in constant memory.

The policy: all or nothing. A first streaming pass checks every line and refuses the whole file
if any line is bad (each bad line reported with its line number, nothing written). Only a file
that checked clean is applied, by a second streaming pass in batches of BATCH_SIZE, one
transaction each. Applying is replay-safe (an unchanged line is `stale` the second time), so an
import interrupted halfway is finished by running it again.

Neither pass holds more than one batch: the file is read line by line and never loaded whole.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from portal.attendance.operations import Counts, import_batch
from portal.attendance.validation import PLATFORMS, InvalidItem, ItemError, SessionRecord, parse_item
from portal.core.db import Database

BATCH_SIZE = 1000
MAX_REPORTED_ERRORS = 50
REQUIRED_COLUMNS = ("session_id", "volunteer_email", "held_at", "minutes", "status", "updated_at")
Progress = Callable[[int], None]  # called with the number of bytes read since the last call


class ImportRefused(ValueError):
    """The file cannot be imported; nothing was written."""


@dataclass
class FileCheck:
    lines: int = 0  # data lines read (the header excluded)
    error_count: int = 0
    errors: list[ItemError] = field(default_factory=list)  # the first MAX_REPORTED_ERRORS

    @property
    def ok(self) -> bool:
        return self.error_count == 0


def check_file(path: Path, *, platform: str | None = None, progress: Progress | None = None) -> FileCheck:
    """The first pass: read every line, keep the count and the first few errors."""
    check = FileCheck()
    for _line_number, record in _records(path, platform, progress):
        check.lines += 1
        if isinstance(record, ItemError):
            check.error_count += 1
            if len(check.errors) < MAX_REPORTED_ERRORS:
                check.errors.append(record)
    return check


def apply_file(
    db: Database,
    path: Path,
    *,
    secret_key: str,
    platform: str | None = None,
    progress: Progress | None = None,
    batch_size: int = BATCH_SIZE,
) -> Counts:
    """The second pass: apply a checked file in batches, one transaction each."""
    total, batch = Counts(), []
    for _line_number, record in _records(path, platform, progress):
        if isinstance(record, ItemError):
            # The file changed since it was checked; batches before this line are applied.
            raise ImportRefused(f"line {record.position} changed since the check: {record.reason}")
        batch.append(record)
        if len(batch) >= batch_size:
            total += import_batch(db, batch, secret_key=secret_key)
            batch = []
    if batch:
        total += import_batch(db, batch, secret_key=secret_key)
    return total


def _records(
    path: Path, platform: str | None, progress: Progress | None
) -> Iterator[tuple[int, SessionRecord | ItemError]]:
    if platform is not None and platform not in PLATFORMS:
        raise ImportRefused(f"--platform must be one of {', '.join(PLATFORMS)}")
    with open(path, "rb") as raw:
        counted = _CountingReader(raw, progress)
        text = io.TextIOWrapper(counted, encoding="utf-8-sig", newline="")
        reader = csv.DictReader(text)
        try:
            columns = reader.fieldnames or []
        except (UnicodeDecodeError, csv.Error):
            raise ImportRefused("line 1: the header is not readable CSV text") from None
        missing = [c for c in REQUIRED_COLUMNS if c not in columns]
        if platform is None and "platform" not in columns:
            missing.insert(0, "platform (or give --platform)")
        if missing:
            raise ImportRefused(f"line 1: the header lacks {', '.join(missing)}")
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except UnicodeDecodeError:
                raise ImportRefused(f"after line {reader.line_num}: the file is not UTF-8 text") from None
            except csv.Error as error:
                raise ImportRefused(f"line {reader.line_num}: not readable CSV ({error})") from None
            yield reader.line_num, _record(row, reader.line_num, platform)


def _record(row: dict, line_number: int, platform: str | None) -> SessionRecord | ItemError:
    if None in row:
        return ItemError(line_number, "more fields than the header has columns")
    own = (row.get("platform") or "").strip()
    if platform is not None and own and own != platform:
        return ItemError(line_number, f"platform differs from --platform {platform}")
    fields = {k: (v.strip() if isinstance(v, str) else v) for k, v in row.items()}
    fields["platform"] = own or platform
    try:
        return parse_item(fields, from_text=True)
    except InvalidItem as error:
        return ItemError(line_number, str(error))


class _CountingReader(io.RawIOBase):
    """A binary file that reports how many bytes were read, for the progress bar."""

    def __init__(self, raw: BinaryIO, progress: Progress | None):
        self._raw, self._progress = raw, progress

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = self._raw.readinto(buffer)
        if count and self._progress is not None:
            self._progress(count)
        return count
