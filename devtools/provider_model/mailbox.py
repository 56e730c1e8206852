"""The mail viewer's memory across restarts: the sent emails, kept in one JSON file.

`make run` keeps it under instance/, so an invitation link sent before a restart can still be
opened in the viewer. Only the emails are kept; idempotency keys, faults and the clock start afresh.
The file is written whole after each email (a development tool's mailbox is small), to a temporary
file first and renamed over the old one, so a crash never leaves half a file; only its owner may
read it, since it holds addresses and live links.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def load(path: Path) -> list[dict]:
    """The emails saved at `path`; none when the file is missing or unreadable (it is only a cache)."""
    try:
        emails = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return [email for email in emails if isinstance(email, dict)] if isinstance(emails, list) else []


def save(path: Path, emails: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".mailbox-", suffix=".json")
    try:
        with os.fdopen(descriptor, "w") as file:  # mkstemp creates it readable by its owner only
            json.dump(emails, file)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
