"""What one report covers: a period and a programme (or all of them), checked before it is built.

Apart from the forms that read it (forms.py), so building a report, and the worker that emails
one, need neither Flask nor WTForms.
"""

from __future__ import annotations

from dataclasses import dataclass

from portal.core.i18n import ENGLISH, N_, translate
from portal.core.periods import Period
from portal.core.programmes import PROGRAMMES

PROGRAMME_CHOICES = ("all", *PROGRAMMES)
ALL_PROGRAMMES = N_("All programmes")


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
        return self.programme_label_in(ENGLISH)

    def programme_label_in(self, language: str) -> str:
        return translate(language, ALL_PROGRAMMES) if self.programme == "all" else PROGRAMMES[self.programme]


@dataclass(frozen=True)
class Drill:
    """What one figure of the report counts, as the list of its session records reads it (issue 50,
    item 2): the report's period or one month of it, a programme or all, and at most one colleague
    (`volunteer`, a user id) or one department (`department`; "" for colleagues without one)."""

    query: ReportQuery
    volunteer: int | None = None
    department: str | None = None

    @property
    def args(self) -> dict:
        found = dict(self.query.args)
        if self.volunteer is not None:
            found["volunteer"] = self.volunteer
        if self.department is not None:
            found["department"] = self.department
        return found
