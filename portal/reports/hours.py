"""Hours as a person reads them: exact minutes turned into hours with two decimals, half up.

Minutes are the only stored figure; every shown hour is rounded once, from minutes, here. Two
decimals keep a quarter hour (15 minutes = 0.25 h), and whole multiples of 3 minutes are exact, so
with the programmes' session lengths a total is the sum of its rows. Where rounding does bite (an
odd minute count), `rounding_gap` measures it and the report says so in a footnote.

Written in the reader's language (portal/core/i18n.py): "1,234.25" in English, "1 234,25" in
Norwegian; the rounding is the same in both.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

from portal.core.i18n import ENGLISH, N_, number, signed_number

HUNDREDTH = Decimal("0.01")


def hours_of(minutes: int) -> Decimal:
    return (Decimal(minutes) / 60).quantize(HUNDREDTH, rounding=ROUND_HALF_UP)


def hours_text(minutes: int, language: str = ENGLISH) -> str:
    """'1,234.25' (or '1 234,25'): the one way hours are written on the page, the PDF and in emails."""
    return number(hours_of(minutes), language, 2)


def hours_change(now_minutes: int, filed_minutes: int) -> float:
    """Shown hours now minus shown hours filed: a float, as it is stored in an email's JSON input."""
    return float(hours_of(now_minutes) - hours_of(filed_minutes))


def signed_hours_text(hours: float | Decimal, language: str = ENGLISH) -> str:
    return signed_number(Decimal(str(hours)).quantize(HUNDREDTH, rounding=ROUND_HALF_UP), language, 2)


def rounding_gap(rows: Iterable[int], total: int) -> Decimal:
    """Shown total minus the sum of the shown rows (zero when they agree)."""
    return hours_of(total) - sum((hours_of(minutes) for minutes in rows), Decimal(0))


# Translated where it is shown (Figures.rounding_note_in), with the gap written in that language.
ROUNDING_NOTE = N_(
    "Hours are rounded to 0.01 h (half up) from exact minutes, each figure on its own, so a total can "
    "differ from the sum of its rows by up to 0.01 h per row; here the largest difference is %(gap)s h."
)
