"""The console's words for what the engine records, in the page's language: statuses, an email's
history, the retention glance, a batch request's answer and the engine's refusals.

The engine (portal/outbox) writes these in English, as constants or with values in them, and the
console translates them where it shows them. A constant is looked up as it is (the engine marks it
with N_). A text with values in it is matched against its pattern below, and the pattern's message
is translated with the values put back; a text that matches nothing is shown as the engine wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from flask_babel import gettext as _

from portal.core import clock, i18n
from portal.core.i18n import N_
from portal.outbox.statuses import (
    BOUNCED,
    CANCELLED,
    COMPLAINED,
    DEAD_LETTER,
    DELIVERED,
    ENQUEUED,
    FAILED,
    PENDING,
    PROCESSING,
    RETRY,
    SENT,
    SUPPRESSED,
)
from portal.web.i18n import current_language

# A status as a person reads it (English: the status with spaces).
STATUS_WORDS = {
    PENDING: N_("pending"),
    ENQUEUED: N_("enqueued"),
    PROCESSING: N_("processing"),
    RETRY: N_("retry"),
    SENT: N_("sent"),
    DELIVERED: N_("delivered"),
    BOUNCED: N_("bounced"),
    COMPLAINED: N_("complained"),
    FAILED: N_("failed"),
    SUPPRESSED: N_("suppressed"),
    DEAD_LETTER: N_("dead letter"),
    CANCELLED: N_("cancelled"),
}


def status_word(status: str | None) -> str:
    if status in STATUS_WORDS:
        return _(STATUS_WORDS[status])
    return (status or "").replace("_", " ")


def engine_text(text: str | None) -> str:
    """An English text the engine wrote, in the page's language (as written if it is not known)."""
    if not text:
        return text or ""  # never look up "": gettext answers it with the catalogue's header
    if current_language() == i18n.ENGLISH:
        return text  # exactly as the engine wrote it
    for pattern, message, kinds in _PATTERNS:
        found = pattern.fullmatch(text)
        if found:
            values = {name: _CONVERT[kinds.get(name, "raw")](value) for name, value in found.groupdict().items()}
            return _(message, **values)
    return _(text)


# --- texts with values in them, as the engine writes them ---------------------------------------------
# Each: the message (its placeholders match the values in the engine's text) and how a value is shown:
# "raw" as written, "int" a number, "status" a status word, "engine" an engine text itself, "time"
# a history time. The first that matches the whole text is used, so the narrower come first.
_MESSAGES = [
    # the history's titles (portal/outbox/events.py); a receipt learned by a lookup: the receipt's own words
    (N_("%(event)s (learned by asking Resend)"), {"event": "engine"}),
    (N_("Sending again (attempt %(attempt)d): the attempt before stopped without an answer"), {}),
    (N_("Being sent (attempt %(attempt)d)"), {}),
    (N_("Status now %(status)s"), {"status": "status"}),
    (N_("Status: %(before)s → %(after)s"), {"before": "status", "after": "status"}),
    (N_("Receipt from Resend: %(type)s"), {}),
    # the history's technical detail (statuses stay as the engine names them there)
    (N_("committed to the outbox; status: %(status)s"), {}),
    (N_("status: %(before)s → %(after)s"), {}),
    (N_("status: %(status)s"), {}),
    (N_("provider message ID: %(id)s"), {}),
    (N_("accepted at attempt %(attempt)d"), {}),
    (N_("message ID %(id)s"), {}),
    (N_("next attempt at %(time)s"), {"time": "time"}),
    (N_("republished by the relay after attempt %(attempt)d"), {}),
    (N_("attempt %(attempt)d: %(error)s"), {}),
    (N_("receipt %(type)s, from a lookup"), {}),
    (N_("receipt %(type)s"), {}),
    (N_("applied as: %(outcome)s"), {"outcome": "engine"}),
    (N_("by %(who)s"), {"who": "engine"}),
    # the retention glance (portal/outbox/retention.py)
    (N_("kept %(days)d days after they arrive; their type, time and outcome stay"), {}),
    (N_("erased %(days)d days after the email's last change; its status, key and times stay"), {}),
    # a batch request's answer (portal/outbox/batch_outcomes.py)
    (N_("accepted: %(count)d message IDs"), {}),
    # the engine's refusals (portal/outbox/actions.py)
    (N_("Keep the reason under %(max)d characters."), {}),
]

_PLACEHOLDER = re.compile(r"%\((\w+)\)([sd])")


def _pattern(message: str) -> re.Pattern:
    parts, at = [], 0
    for found in _PLACEHOLDER.finditer(message):
        parts.append(re.escape(message[at : found.start()]))
        parts.append(f"(?P<{found[1]}>\\d+)" if found[2] == "d" else f"(?P<{found[1]}>.+?)")
        at = found.end()
    parts.append(re.escape(message[at:]))
    return re.compile("".join(parts), re.S)


def _kinds(message: str, kinds: dict) -> dict:
    numbers = {name: "int" for name, kind in _PLACEHOLDER.findall(message) if kind == "d"}
    return {**numbers, **kinds}


_PATTERNS = [(_pattern(message), message, _kinds(message, kinds)) for message, kinds in _MESSAGES]


# --- an email's history ----------------------------------------------------------------------------


def history_time(at: str | None, fallback: str = "") -> str:
    """A stored time to the second, as a history shows it: 3 Dec 2026, 14:05:09 UTC (3. des. 2026 …)."""
    try:
        return _second(clock.parse(at or ""))
    except (ValueError, TypeError):
        return fallback or at or ""


def _second(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return f"{i18n.day(moment.date(), current_language())}, {moment:%H:%M:%S} UTC"


def _shown_time(text: str) -> str:
    """A time the engine wrote into a text (events.display_second), in the page's language."""
    try:
        return _second(datetime.strptime(text, "%d %b %Y, %H:%M:%S UTC").replace(tzinfo=UTC))
    except ValueError:
        return text


_CONVERT = {
    "raw": lambda value: value,
    "int": int,
    "status": status_word,
    "engine": engine_text,
    "time": _shown_time,
}


@dataclass(frozen=True)
class Entry:
    """One entry of an email's history, as the page shows it."""

    display_at: str
    title: str
    tone: str = ""
    details: list[str] = field(default_factory=list)
    actor: str | None = None
    reason: str | None = None
    related_outbox_id: str | None = None
    related_label: str = ""


def history(timeline) -> list[Entry]:
    """The engine's timeline entries, in the page's language (English: as the engine writes them)."""
    english = current_language() == i18n.ENGLISH
    return [
        Entry(
            display_at=entry.display_at if english else history_time(entry.at, entry.display_at),
            title=engine_text(entry.title),
            tone=entry.tone,
            details=[engine_text(detail) for detail in entry.details if detail],
            actor=entry.actor,
            reason=entry.reason,
            related_outbox_id=entry.related_outbox_id,
            related_label=engine_text(entry.related_label),
        )
        for entry in timeline
    ]


def kept(items) -> list:
    """The retention glance's rows, their words in the page's language."""
    return [replace(item, what=engine_text(item.what), rule=engine_text(item.rule)) for item in items]
