"""Reading the addresses a manager pastes into the invite box."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from email_validator import EmailNotValidError, validate_email

MAX_ADDRESSES = 500
MAX_NAME_LENGTH = 120  # as the accept form allows
_SEPARATORS = re.compile(r"[,;\s]+")
_ENTRIES = re.compile(r"[;\r\n]+")  # Outlook separates recipients with semicolons
_RECIPIENT = re.compile(r"([^<>]*)<([^<>]*)>")  # (what comes before, the address in brackets)
_QUOTED = re.compile(r'"[^"]*"')


@dataclass
class ParsedAddresses:
    valid: list[str] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)  # (as typed, why)
    names: dict[str, str] = field(default_factory=dict)  # {valid address: the name pasted with it}


def _candidates(text: str) -> list[tuple[str, str]]:
    """What was typed, split into things that should each be one address, each with a name ("" if none).

    An entry with angle brackets is a recipient copied from a mail program (`Ada Lovelace
    <ada@example.org>`, `"Lovelace, Ada" <ada@example.org>`): its address is in the brackets and
    the words before them are its name, except any word with an @, which is an address too.
    """
    found = []
    for entry in _ENTRIES.split(text or ""):
        if "<" not in entry:
            found.extend((word, "") for word in _SEPARATORS.split(entry))
            continue
        end = 0
        for match in _RECIPIENT.finditer(entry):
            before, end = match.group(1), match.end()
            words = _SEPARATORS.split(_QUOTED.sub(" ", before))
            found.extend((word, "") for word in words if "@" in word)
            found.append((match.group(2), _name_before(before, words)))
        found.extend((word, "") for word in _SEPARATORS.split(entry[end:]) if "@" in word)
    return found


def _name_before(before: str, words: list[str]) -> str:
    """The name written before a bracketed address: a quoted one, else the words after any address."""
    quoted = _QUOTED.findall(before)
    if quoted:
        name = quoted[-1].strip('"')
    else:
        last_address = max((i for i, word in enumerate(words) if "@" in word), default=-1)
        name = " ".join(word for word in words[last_address + 1 :] if word)
    return " ".join(name.split())[:MAX_NAME_LENGTH]


def parse_addresses(text: str) -> ParsedAddresses:
    """Addresses from commas, semicolons, new lines, a pasted spreadsheet column, or recipients
    pasted from Outlook (`Name <addr>; Name2 <addr2>`).

    Trimmed, lower-cased for comparison and de-duplicated, in the order first seen.
    """
    parsed, seen = ParsedAddresses(), set()
    for raw, name in _candidates(text):
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
        if name and address not in parsed.names:
            parsed.names[address] = name
    return parsed
