"""Hours as a person reads them: exact minutes turned into hours with two decimals, half up.

Minutes are the only stored figure; every shown hour is rounded once, from minutes, here. Two
decimals keep a quarter hour (15 minutes = 0.25 h), and whole multiples of 3 minutes are exact, so
with the programmes' session lengths a total is the sum of its rows. Where rounding does bite (an
odd minute count), `rounding_gap` measures it and the report says so in a footnote.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

HUNDREDTH = Decimal("0.01")


def hours_of(minutes: int) -> Decimal:
    return (Decimal(minutes) / 60).quantize(HUNDREDTH, rounding=ROUND_HALF_UP)


def hours_text(minutes: int) -> str:
    """'1,234.25': the one way hours are written on the page, the PDF and in emails."""
    return f"{hours_of(minutes):,.2f}"


def hours_change(now_minutes: int, filed_minutes: int) -> float:
    """Shown hours now minus shown hours filed: a float, as it is stored in an email's JSON input."""
    return float(hours_of(now_minutes) - hours_of(filed_minutes))


def signed_hours_text(hours: float | Decimal) -> str:
    return f"{Decimal(str(hours)).quantize(HUNDREDTH, rounding=ROUND_HALF_UP):+,.2f}"


def rounding_gap(rows: Iterable[int], total: int) -> Decimal:
    """Shown total minus the sum of the shown rows (zero when they agree)."""
    return hours_of(total) - sum((hours_of(minutes) for minutes in rows), Decimal(0))


ROUNDING_NOTE = (
    "Hours are rounded to 0.01 h (half up) from exact minutes, each figure on its own, so a total can "
    "differ from the sum of its rows by up to 0.01 h per row; here the largest difference is {gap} h."
)
