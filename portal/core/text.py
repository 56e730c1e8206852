"""Cleaning what people type, the same way in every area.

Forms validate first and show their own messages; domain operations clean again with these, so
their rules hold for any caller (a CLI, a test, a replay). Errors are InputError, whose message
is safe to show.
"""

from __future__ import annotations

import unicodedata


class InputError(ValueError):
    """Bad input for an operation; the message is safe to show."""


def normalise_email(email: str) -> str:
    return (email or "").strip().lower()


def strip(value):
    """A WTForms filter: surrounding spaces go, anything that is not text is left for validators."""
    return value.strip() if isinstance(value, str) else value


def control_characters_in(value: str, allowed: str = "") -> set[str]:
    """The control characters (Unicode category Cc: NUL, escape, …) in `value`, except `allowed`."""
    return {char for char in value if unicodedata.category(char) == "Cc" and char not in allowed}


def _refuse_control_characters(value: str, what: str, error: type[InputError], allowed: str = "") -> None:
    if control_characters_in(value, allowed):
        raise error(f"Remove the invisible control characters from {what}.")


# Characters that reorder the text around them (right-to-left overrides, embeddings, isolates, and
# the marks that set a direction): in a name they make "Acme" display as something else.
DIRECTION_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# The joiners some scripts (Persian, Indic) and emoji need between two of their characters.
_JOINERS = frozenset("\u200c\u200d")


def hidden_characters_in(value: str) -> set[str]:
    """The characters of `value` that show as nothing or reorder what is shown: every format
    character (Unicode category Cf: zero-width spaces, word joiners, soft hyphens, byte-order marks,
    direction marks, overrides and isolates, tag characters), except a joiner between two characters
    outside ASCII, where a script or an emoji needs it ("Pay\u200dPal" hides one; Persian uses them).

    Text shown to another person (names, company names, subjects, messages, notes) holds none: the
    reader would see other words than were written, or a name that is not the one compared. They are
    refused, never silently dropped, so the writer sees what was refused.
    """
    found = set()
    for index, char in enumerate(value or ""):
        if unicodedata.category(char) != "Cf":
            continue
        if char in _JOINERS and 0 < index < len(value) - 1:
            if not (value[index - 1].isascii() or value[index + 1].isascii()):
                continue
        found.add(char)
    return found


def refuse_hidden_characters(value: str | None, what: str, error: type[InputError] = InputError) -> None:
    """Raise `error` naming `what` if `value` holds characters that hide or reorder text."""
    found = hidden_characters_in(value or "")
    if found & DIRECTION_CONTROLS:
        raise error(f"Remove the characters that change the text's direction from {what}.")
    if found:
        raise error(f"Remove the invisible characters from {what}.")


def plain_text(value: str) -> str:
    """NFKC (full-width letters and ligatures become plain ones) without invisible format characters
    (zero-width spaces, word joiners, soft hyphens, byte-order marks): what one name looks like, one
    way, so "Acme\u200b Ltd" and "Ａｃｍｅ Ltd" are "Acme Ltd" and meet the duplicate check."""
    normal = unicodedata.normalize("NFKC", value)
    return "".join(c for c in normal if unicodedata.category(c) != "Cf" or c in _JOINERS)


def one_line(value: str | None, what: str, limit: int, error: type[InputError] = InputError) -> str:
    """Plain text on one line: inner runs of spaces and line breaks become one space; characters
    that hide or reorder text, empty or too long are refused with `error`."""
    _refuse_control_characters(value or "", what, error, allowed="\n\r\t")
    refuse_hidden_characters(value, what, error)
    clean = " ".join(plain_text(value or "").split())
    if not clean:
        raise error(f"Enter {what}.")
    if len(clean) > limit:
        raise error(f"Keep {what} under {limit:,} characters.")
    return clean


def paragraphs(value: str | None, what: str, limit: int, error: type[InputError] = InputError) -> str:
    """Multi-line text with Windows line ends made plain; may be empty; characters that hide or
    reorder text, or too long, are refused with `error`."""
    _refuse_control_characters(value or "", what, error, allowed="\n\r\t")
    refuse_hidden_characters(value, what, error)
    clean = (value or "").replace("\r\n", "\n").strip()
    if len(clean) > limit:
        raise error(f"Keep {what} under {limit:,} characters.")
    return clean
