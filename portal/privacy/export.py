"""A person's data as a ZIP: a README, in the language of the page it was asked from, and each
section as JSON and as CSV (the data as stored: names of files and columns are the same in every
language)."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from datetime import datetime

from babel import dates

from portal.core.i18n import ENGLISH, N_, language_or_default, translate
from portal.privacy.queries import SECTIONS, PersonalData

# What each type of receipt says, for the README (the provider's own names stay in the files).
RECEIPT_TYPES = {
    "email.sent": N_("the provider sent the email"),
    "email.delivered": N_("your mail server accepted it"),
    "email.delivery_delayed": N_("your mail server had not taken it yet"),
    "email.bounced": N_("your mail server refused it (bounce_type and bounce_subtype say why)"),
    "email.complained": N_("it was marked as spam"),
    "email.opened": N_("it was opened"),
    "email.clicked": N_("a link in it was followed"),
    "email.failed": N_("the provider could not send it"),
}


def data_zip(data: PersonalData, *, portal_name: str, made_at: datetime, language: str = ENGLISH) -> bytes:
    """`portal_name` as the README names the portal, in `language` ("the TEEI partner portal")."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("README.txt", _readme(data, portal_name=portal_name, made_at=made_at, language=language))
        for name, rows in data.sections.items():
            archive.writestr(f"{name}.json", json.dumps(rows, indent=2, ensure_ascii=False, default=str))
            archive.writestr(f"{name}.csv", _csv(rows, data.columns.get(name, [])))
    return buffer.getvalue()


def _csv(rows: list[dict], columns: list[str]) -> str:
    """A header row naming the columns (an empty section has it too), then one row each."""
    columns = list(dict.fromkeys([*columns, *(column for row in rows for column in row)]))
    if not columns:
        return ""
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


def _readme(data: PersonalData, *, portal_name: str, made_at: datetime, language: str) -> str:
    language = language_or_default(language)
    # "03 October 2026" / "03. oktober 2026", at a UTC time.
    day = dates.format_date(made_at, format="dd MMMM y" if language == ENGLISH else "dd. MMMM y", locale=language)
    lines = [
        translate(language, "What %(portal)s holds about %(address)s", portal=portal_name, address=data.address),
        translate(language, "Made %(day)s at %(time)s UTC.", day=day, time=f"{made_at:%H:%M}"),
        "",
        translate(language, "Each part is here twice: as JSON (for programs) and as CSV (for a spreadsheet)."),
        translate(language, "Times are in UTC. An empty part means the portal holds nothing of that kind about you."),
        "",
    ]
    for name, description in SECTIONS.items():
        lines.append(f"{name} ({len(data.sections[name])}): {translate(language, description)}")
    lines += [
        "",
        translate(language, "Each CSV file starts with a row that names its columns, even when it has no other row."),
        translate(
            language,
            "receipts: one line each; its type is what the email provider reported, and outcome what the portal "
            "did with it:",
        ),
        *(f"  {kind}: {translate(language, meaning)}" for kind, meaning in RECEIPT_TYPES.items()),
    ]
    lines += [
        "",
        translate(
            language,
            "Not included: other people's data (for example the text of an invitation, which names the "
            "colleague who sent it), password hashes and link tokens, which are secrets, not data about you.",
        ),
        translate(
            language,
            "To have this data erased, ask the portal's administrators (volunteers can erase their own "
            "account from the account page).",
        ),
    ]
    return "\n".join(lines) + "\n"
