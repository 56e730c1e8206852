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


# Characters that reorder the text around them (right-to-left overrides, embeddings, isolates): in a
# name they make "Acme" display as something else, so they are refused, never silently dropped.
DIRECTION_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Format characters that stay: the joiners some scripts and emoji need.
_KEPT_FORMAT = frozenset("\u200c\u200d")


def plain_text(value: str) -> str:
    """NFKC (full-width letters and ligatures become plain ones) without invisible format characters
    (zero-width spaces, word joiners, soft hyphens, byte-order marks): what one name looks like, one
    way, so "Acme\u200b Ltd" and "Ａｃｍｅ Ltd" are "Acme Ltd" and meet the duplicate check."""
    normal = unicodedata.normalize("NFKC", value)
    return "".join(c for c in normal if unicodedata.category(c) != "Cf" or c in _KEPT_FORMAT)


def one_line(value: str | None, what: str, limit: int, error: type[InputError] = InputError) -> str:
    """Plain text on one line: inner runs of spaces and line breaks become one space; direction
    controls, empty or too long are refused with `error`."""
    _refuse_control_characters(value or "", what, error, allowed="\n\r\t")
    if DIRECTION_CONTROLS.intersection(value or ""):
        raise error(f"Remove the characters that change the text's direction from {what}.")
    clean = " ".join(plain_text(value or "").split())
    if not clean:
        raise error(f"Enter {what}.")
    if len(clean) > limit:
        raise error(f"Keep {what} under {limit:,} characters.")
    return clean


def paragraphs(value: str | None, what: str, limit: int, error: type[InputError] = InputError) -> str:
    """Multi-line text with Windows line ends made plain; may be empty; too long is refused with `error`."""
    _refuse_control_characters(value or "", what, error, allowed="\n\r\t")
    clean = (value or "").replace("\r\n", "\n").strip()
    if len(clean) > limit:
        raise error(f"Keep {what} under {limit:,} characters.")
    return clean
