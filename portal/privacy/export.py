"""A person's data as a ZIP: a README, and each section as JSON and as CSV."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from datetime import datetime

from portal.privacy.queries import SECTIONS, PersonalData


def data_zip(data: PersonalData, *, portal_name: str, made_at: datetime) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("README.txt", _readme(data, portal_name=portal_name, made_at=made_at))
        for name, rows in data.sections.items():
            archive.writestr(f"{name}.json", json.dumps(rows, indent=2, ensure_ascii=False, default=str))
            archive.writestr(f"{name}.csv", _csv(rows))
    return buffer.getvalue()


def _csv(rows: list[dict]) -> str:
    if not rows:
        return ""
    columns = list(dict.fromkeys(column for row in rows for column in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        # A cell a spreadsheet would run as a formula is written as text (a leading apostrophe).
        writer.writerow({key: _as_cell(value) for key, value in row.items()})
    return out.getvalue()


def _as_cell(value) -> str:
    text = (
        "" if value is None else json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)
    )
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _readme(data: PersonalData, *, portal_name: str, made_at: datetime) -> str:
    lines = [
        f"What {portal_name} holds about {data.address}",
        f"Made {made_at:%d %B %Y at %H:%M} UTC.",
        "",
        "Each part is here twice: as JSON (for programs) and as CSV (for a spreadsheet).",
        "Times are in UTC. An empty part means the portal holds nothing of that kind about you.",
        "",
    ]
    for name, description in SECTIONS.items():
        lines.append(f"{name} ({len(data.sections[name])}): {description}")
    lines += [
        "",
        "Not included: other people's data (for example the text of an invitation, which names the",
        "colleague who sent it), password hashes and link tokens, which are secrets, not data about you.",
        "To have this data erased, ask the portal's administrators (volunteers can erase their own",
        "account from the account page).",
    ]
    return "\n".join(lines) + "\n"
