"""Reading the addresses a manager pastes into the invite box."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from email_validator import EmailNotValidError, validate_email

MAX_ADDRESSES = 500
_SEPARATORS = re.compile(r"[,;\s]+")
_ENTRIES = re.compile(r"[;\r\n]+")  # Outlook separates recipients with semicolons
_BRACKETED = re.compile(r"<([^<>]*)>")
_QUOTED = re.compile(r'"[^"]*"')


@dataclass
class ParsedAddresses:
    valid: list[str] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)  # (as typed, why)


def _candidates(text: str) -> list[str]:
    """What was typed, split into things that should each be one address.

    An entry with angle brackets is a recipient copied from a mail program (`Ada Lovelace
    <ada@example.org>`, `"Lovelace, Ada" <ada@example.org>`): its address is in the brackets and
    the words around them are a name, except any word with an @, which is an address too.
    """
    found = []
    for entry in _ENTRIES.split(text or ""):
        if "<" in entry:
            found.extend(_BRACKETED.findall(entry))
            outside = _BRACKETED.sub(" ", _QUOTED.sub(" ", entry))
            found.extend(word for word in _SEPARATORS.split(outside) if "@" in word)
        else:
            found.extend(_SEPARATORS.split(entry))
    return found


def parse_addresses(text: str) -> ParsedAddresses:
    """Addresses from commas, semicolons, new lines, a pasted spreadsheet column, or recipients
    pasted from Outlook (`Name <addr>; Name2 <addr2>`).

    Trimmed, lower-cased for comparison and de-duplicated, in the order first seen.
    """
    parsed, seen = ParsedAddresses(), set()
    for raw in _candidates(text):
        candidate = raw.strip().strip("\"'<>").strip()
        if not candidate:
            continue
        try:
            address = validate_email(candidate, check_deliverability=False).normalized.lower()
        except EmailNotValidError as error:
            parsed.invalid.append((candidate, str(error)))
            continue
        if address not in seen:
            seen.add(address)
            parsed.valid.append(address)
    return parsed
