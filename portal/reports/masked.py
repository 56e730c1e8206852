"""A filed report through its filing mask: which printed figures are hidden. The filing PDF draws
it and the public verify page states it, so both hide exactly the same figures."""

from __future__ import annotations

from typing import NamedTuple

from portal.reports.disclosure import ALL
from portal.reports.filing import FilingMask
from portal.reports.goals import Line, before_lines, before_note, goal_lines
from portal.reports.report import Report


class ComparisonText(NamedTuple):
    """The goal's progress, this period against last year, and a note on last year, as shown."""

    goals: list[str]
    before: list[Line]
    note: str | None


class View(NamedTuple):
    """The report through its filing mask: which printed figures are hidden."""

    report: Report
    mask: FilingMask
    months: list[str]  # YYYY-MM of every month of the period

    @property
    def first(self) -> str:
        return self.months[0]

    @property
    def last(self) -> str:
        return self.months[-1]

    def total_hidden(self) -> bool:
        return self.mask.hides(self.first, self.last)

    def count_hidden(self, programme: str = ALL) -> bool:
        return self.mask.hides_count(self.first, self.last, programme)

    def programme_hidden(self, programme: str) -> bool:
        return self.mask.hides(self.first, self.last, programme)

    def participation_hidden(self) -> bool:
        return self.mask.hides_participation(self.first, self.last)

    def month_key(self, month) -> str:
        return month.start[:7]

    def any_hidden(self) -> bool:
        return bool(self.mask.hidden or self.mask.counts_hidden)

    def comparison(self, language: str) -> ComparisonText:
        """The report's goal and year before (goals.py), hidden as the figures they come from."""
        report = self.report
        return ComparisonText(
            goal_lines(
                report.comparison,
                participation=report.figures.participation,
                participation_hidden=self.participation_hidden(),
                language=language,
            ),
            before_lines(
                report.comparison,
                figures=report.figures,
                total_hidden=self.total_hidden(),
                count_hidden=self.count_hidden(),
                participation_hidden=self.participation_hidden(),
                language=language,
            ),
            before_note(report.comparison, language),
        )


def view_of(report: Report) -> View:
    """A filed report (its `mask` set) through its mask."""
    return View(report, report.mask, [m.start[:7] for m in report.figures.months])


def masked_view(report: Report) -> View:
    """The report page's view: through its mask where it has one (TEEI's read-only view), else
    hiding nothing (the company's own managers see every figure)."""
    return View(report, report.mask or FilingMask(), [m.start[:7] for m in report.figures.months])
