"""Reading the addresses a manager pastes into the invite box."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from email_validator import EmailNotValidError, validate_email

MAX_ADDRESSES = 500
_SEPARATORS = re.compile(r"[,;\s]+")


@dataclass
class ParsedAddresses:
    valid: list[str] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)  # (as typed, why)


def parse_addresses(text: str) -> ParsedAddresses:
    """Addresses from commas, semicolons, new lines or a pasted spreadsheet column.

    Trimmed, lower-cased for comparison and de-duplicated, in the order first seen.
    """
    parsed, seen = ParsedAddresses(), set()
    for raw in _SEPARATORS.split(text or ""):
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
