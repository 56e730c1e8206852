"""Reading attendance records, from the API's JSON or an import file's lines, into SessionRecords.

One set of rules for both doors. Every problem with an item is reported with the item's position
(index in the request, line in the file) and a reason that never repeats the item's values: they
hold volunteers' addresses, and these reasons reach logs and answers.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from portal.core import clock

PLATFORMS = ("language", "mentorship")
STATUSES = ("attended", "cancelled", "no_show")
# `volunteer_time` (optional): held in working time (the default) or in the volunteer's own time.
COMPANY_TIME, OWN_TIME = "company", "own"
VOLUNTEER_TIMES = (COMPANY_TIME, OWN_TIME)
ATTENDED = "attended"
MAX_SESSIONS_PER_REQUEST = 1000
MIN_MINUTES, MAX_MINUTES = 1, 600
MAX_SESSION_ID_LENGTH = 200
MAX_EMAIL_LENGTH = 320
MAX_TIME_LENGTH = 64
_SPACE = re.compile(r"\s")
_INVISIBLE = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}


@dataclass(frozen=True, slots=True)
class SessionRecord:
    platform: str
    session_id: str
    volunteer_email: str  # lower-cased
    held_at: str  # fixed-width UTC (portal/core/clock.py)
    minutes: int
    status: str
    updated_at: str  # fixed-width UTC: the platform's version of this record
    own_time: bool = False  # held in the volunteer's own time (`volunteer_time: "own"`), not working time

    def as_row(self) -> list:
        """The record as one element of a batch bound as JSON (see operations.apply_sessions)."""
        return [
            self.platform,
            self.session_id,
            self.volunteer_email,
            self.held_at,
            self.minutes,
            self.status,
            self.updated_at,
            int(self.own_time),
        ]


@dataclass(frozen=True)
class ItemError:
    position: int  # the item's index in the request, or the line number in a file
    reason: str


class MalformedBody(ValueError):
    """The request is not a JSON object with a list of sessions: nothing can be read from it."""


class InvalidSessions(ValueError):
    """One or more items are invalid; the request is refused whole."""

    def __init__(self, errors: list[ItemError]):
        super().__init__(f"{len(errors)} invalid session(s)")
        self.errors = errors


class InvalidItem(ValueError):
    """One item's problems, joined into one reason."""


def parse_request(body: bytes) -> list[SessionRecord]:
    """The API's body: {"platform": ..., "sessions": [...]}; all valid, or InvalidSessions."""
    try:
        document = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError):
        raise MalformedBody("the body is not JSON") from None
    if not isinstance(document, dict):
        raise MalformedBody("the body is not a JSON object")
    sessions = document.get("sessions")
    if not isinstance(sessions, list):
        raise MalformedBody("the body has no list of sessions")
    if len(sessions) > MAX_SESSIONS_PER_REQUEST:
        raise InvalidSessions(
            [ItemError(MAX_SESSIONS_PER_REQUEST, f"at most {MAX_SESSIONS_PER_REQUEST} sessions a request")]
        )
    platform = document.get("platform")
    records, errors = [], []
    for index, item in enumerate(sessions):
        try:
            if not isinstance(item, dict):
                raise InvalidItem("a session is a JSON object")
            records.append(parse_item(item, default_platform=platform))
        except InvalidItem as error:
            errors.append(ItemError(index, str(error)))
    if errors:
        raise InvalidSessions(errors)
    return records


def parse_item(item: Mapping[str, Any], *, default_platform: Any = None, from_text: bool = False) -> SessionRecord:
    """One session from JSON values (or a file's text fields: from_text); InvalidItem names every problem."""
    problems = []
    platform = item.get("platform") or default_platform
    if platform not in PLATFORMS:
        problems.append(f"platform must be one of {', '.join(PLATFORMS)}")
    session_id = item.get("session_id")
    if isinstance(session_id, str):
        session_id = session_id.strip()
    if not isinstance(session_id, str) or not 0 < len(session_id) <= MAX_SESSION_ID_LENGTH:
        problems.append(f"session_id must be text of 1 to {MAX_SESSION_ID_LENGTH} characters")
    elif _has_invisible(session_id):
        problems.append("session_id holds a control or invisible character")
    email = _email(item.get("volunteer_email"))
    if email is None:
        problems.append("volunteer_email is not an email address")
    elif _has_invisible(email):
        problems.append("volunteer_email holds a control or invisible character")
    held_at = _utc_time(item.get("held_at"), "held_at", problems)
    minutes = _minutes(item.get("minutes"), from_text)
    if minutes is None:
        problems.append(f"minutes must be a whole number from {MIN_MINUTES} to {MAX_MINUTES}")
    status = item.get("status")
    if status not in STATUSES:
        problems.append(f"status must be one of {', '.join(STATUSES)}")
    updated_at = _utc_time(item.get("updated_at"), "updated_at", problems)
    volunteer_time = item.get("volunteer_time")
    if from_text and isinstance(volunteer_time, str):
        volunteer_time = volunteer_time.strip()
    if volunteer_time in (None, ""):
        volunteer_time = COMPANY_TIME  # platforms that do not say: working time, as before
    if volunteer_time not in VOLUNTEER_TIMES:
        problems.append(f"volunteer_time must be one of {', '.join(VOLUNTEER_TIMES)}")
    if problems:
        raise InvalidItem("; ".join(problems))
    return SessionRecord(platform, session_id, email, held_at, minutes, status, updated_at, volunteer_time == OWN_TIME)


def _has_invisible(text: str) -> bool:
    """Control (NUL, ESC), format (zero-width, direction) and separator characters: an identifier
    holding one would reach a spreadsheet, a CSV or a terminal reading a log as something else."""
    return any(unicodedata.category(character) in _INVISIBLE for character in text)


def _email(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    address = value.strip().lower()
    local, at, domain = address.rpartition("@")
    if not at or not local or "." not in domain or len(address) > MAX_EMAIL_LENGTH:
        return None
    if _SPACE.search(address) or domain.startswith(".") or domain.endswith("."):
        return None
    return address


def _minutes(value: Any, from_text: bool) -> int | None:
    """A JSON number (not "60", not 60.5, not true); in a file, the text of a whole number."""
    if isinstance(value, bool):
        return None
    if from_text and isinstance(value, str):
        value = value.strip()
        if not (value.isascii() and value.isdigit()):  # "²" is a digit to str.isdigit, not to int()
            return None
        value = int(value)
    if not isinstance(value, int) or not MIN_MINUTES <= value <= MAX_MINUTES:
        return None
    return value


def _utc_time(value: Any, name: str, problems: list[str]) -> str | None:
    """An ISO 8601 time with a zone (Z or an offset), as fixed-width UTC."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TIME_LENGTH:
        problems.append(f"{name} must be an ISO 8601 time with a zone")
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        problems.append(f"{name} must be an ISO 8601 time with a zone")
        return None
    if moment.tzinfo is None or moment.utcoffset() is None:
        problems.append(f"{name} has no time zone (add Z or an offset such as +01:00)")
        return None
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:
        moment = None
    if moment is None or not 2000 <= moment.year <= 9999:
        problems.append(f"{name} is out of range")
        return None
    return clock.iso(moment)
