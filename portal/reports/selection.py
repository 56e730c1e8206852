"""What one report covers: a period and a programme (or all of them), checked before it is built.

Apart from the forms that read it (forms.py), so building a report, and the worker that emails
one, need neither Flask nor WTForms.
"""

from __future__ import annotations

from dataclasses import dataclass

from portal.core.periods import Period
from portal.core.programmes import PROGRAMMES

PROGRAMME_CHOICES = ("all", *PROGRAMMES)


@dataclass(frozen=True)
class ReportQuery:
    period: Period
    programme: str = "all"

    @property
    def args(self) -> dict:
        return {**self.period.query, "programme": self.programme}

    @property
    def programmes(self) -> tuple[str, ...]:
        return tuple(PROGRAMMES) if self.programme == "all" else (self.programme,)

    @property
    def programme_label(self) -> str:
        return "All programmes" if self.programme == "all" else PROGRAMMES[self.programme]
