"""Reading a CSV file of colleagues (name, email, department) for the invitations page's import.

Excel's files too: "CSV UTF-8" starts with a byte order mark, and in many countries (Norway among
them) Excel separates columns with `;`. The first line names the columns (name, email, department,
in English or Norwegian, in any order); a file without such a line is read as name, email,
department. Every line is checked; a bad line is reported with its number and the rest can still go.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from email_validator import EmailNotValidError, validate_email

from portal.core.i18n import N_
from portal.core.text import control_characters_in, hidden_characters_in

MAX_NAME, MAX_DEPARTMENT = 120, 100
HEADERS = {
    "name": "name",
    "navn": "name",
    "full name": "name",
    "email": "email",
    "e-mail": "email",
    "e-post": "email",
    "epost": "email",
    "email address": "email",
    "department": "department",
    "avdeling": "department",
}


@dataclass(frozen=True)
class Colleague:
    line: int
    name: str
    email: str
    department: str


@dataclass
class ReadColleagues:
    colleagues: list[Colleague] = field(default_factory=list)
    problems: list[tuple[int, str, dict]] = field(default_factory=list)  # (line, N_ message, values)


class UnreadableFile(ValueError):
    """The file is not a CSV file the import can read; `message` is N_-marked."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnreadableFile(
            N_("The file is not in UTF-8. In Excel, save it as “CSV UTF-8 (comma delimited)”.")
        ) from None


def _dialect(text: str) -> str:
    first = text.split("\n", 1)[0]
    return max((";", ",", "\t"), key=first.count)


def _clean(value: str) -> str:
    return " ".join(value.split())


def read_colleagues(data: bytes, *, limit: int) -> ReadColleagues:
    text = _text(data)
    if not text.strip():
        raise UnreadableFile(N_("The file is empty."))
    rows = list(csv.reader(io.StringIO(text), delimiter=_dialect(text)))
    columns = {"name": 0, "email": 1, "department": 2}
    start = 0
    heading = [HEADERS.get(_clean(cell).lower()) for cell in rows[0]] if rows else []
    if "email" in heading:
        columns = {key: heading.index(key) for key in ("name", "email", "department") if key in heading}
        start = 1
    read, seen = ReadColleagues(), {}
    for number, row in enumerate(rows[start:], start=start + 1):
        if not any(cell.strip() for cell in row):
            continue

        def cell(key: str, row=row) -> str:
            index = columns.get(key)
            return row[index].strip() if index is not None and index < len(row) else ""

        name, raw_email, department = cell("name"), cell("email"), cell("department")
        problem = colleague_problem(name, raw_email, department)
        if problem:
            read.problems.append((number, *problem))
            continue
        email = normalised_address(raw_email)
        if email in seen:
            read.problems.append((number, N_("The same address as line %(line)d."), {"line": seen[email]}))
            continue
        seen[email] = number
        read.colleagues.append(Colleague(number, _clean(name), email, _clean(department)))
    if len(read.colleagues) > limit:
        raise UnreadableFile(N_("The file lists more colleagues than one import can invite."))
    if not read.colleagues and not read.problems:
        raise UnreadableFile(N_("The file lists no colleagues."))
    return read


def normalised_address(email: str) -> str:
    return validate_email(email, check_deliverability=False).normalized.lower()


def colleague_problem(name: str, email: str, department: str) -> tuple[str, dict] | None:
    """What is wrong with one colleague's line (an N_ message and its values), or None."""
    for value in (name, email, department):
        if control_characters_in(value) or hidden_characters_in(value):
            return N_("Invisible or control characters; remove them."), {}
    if not email:
        return N_("No email address."), {}
    try:
        validate_email(email, check_deliverability=False)
    except EmailNotValidError:
        return N_("“%(address)s” is not a valid email address."), {"address": email[:254]}
    if len(name) > MAX_NAME:
        return N_("The name is longer than %(num)d characters."), {"num": MAX_NAME}
    if len(department) > MAX_DEPARTMENT:
        return N_("The department is longer than %(num)d characters."), {"num": MAX_DEPARTMENT}
    return None
