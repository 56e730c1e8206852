"""A company's yearly goals and the year before: what a report compares its figures with (issue 50, item 1).

Goals are kept per company and report year (table company_goals, keyed by the year's first day): a
goal for 2027 never rewrites how 2026 measured up. A report measures a goal when its period begins
on the first day of a report year and ends inside it (the year, or the year to date).

The year before is the same period twelve months earlier. On the page (the company's working copy,
with names) it is read live. A filing output (PDF, report email, closed year) compares with the year
before *as filed*: filing a period files the year before first, with the same joint check
(disclosure.py), so last year's figures are released exactly as last year's own filing shows them,
and what that filing hides stays hidden here. A change is shown only where both of its figures are:
the difference of a shown and a hidden figure would give the hidden one away.

A month's or quarter's filing measures the hours goal over the year to date: the sum of the month
totals that filings released (each month as first filed). A sum of released figures tells nothing
new; if one month of the year to date is hidden in every filing, the year to date is hidden too.
What a filing compared with is stored with it (`Comparison`), so every copy states the same.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

import sqlalchemy as sa

from portal.core.i18n import N_, number, percent, signed_number, translate
from portal.core.periods import Period, add_months, fiscal_year_containing
from portal.reports.hours import hours_of, hours_text, signed_hours_text

GOAL_OF = sa.text(
    "SELECT hours, participation FROM company_goals WHERE company_id = :company_id AND year_start = :year"
)
SAVE_GOAL = sa.text("""
    INSERT INTO company_goals (company_id, year_start, hours, participation, updated_by, updated_at)
    VALUES (:company_id, :year, :hours, :participation, :actor, :now)
    ON CONFLICT (company_id, year_start) DO UPDATE SET
        hours = excluded.hours, participation = excluded.participation,
        updated_by = excluded.updated_by, updated_at = excluded.updated_at
""")


@dataclass(frozen=True)
class Goal:
    """One report year's goals: hours, and participation in percent (None: no goal of that kind)."""

    year_start: str
    year_end: str
    hours: str | None = None  # a decimal as text, as entered
    participation: str | None = None

    @property
    def any(self) -> bool:
        return self.hours is not None or self.participation is not None


def read_goal(conn: sa.Connection, *, company_id: int, year: Period) -> Goal:
    row = conn.execute(GOAL_OF, {"company_id": company_id, "year": year.start.isoformat()}).first()
    found = (row.hours, row.participation) if row else (None, None)
    return Goal(year.start.isoformat(), year.end.isoformat(), *found)


def goal_year(period: Period, fiscal_start_month: int) -> Period | None:
    """The report year whose goal the period measures: it begins on the year's first day and ends inside it."""
    year = fiscal_year_containing(period.start, fiscal_start_month)
    return year if period.start == year.start and period.end <= year.end else None


def year_before(period: Period) -> Period:
    """The same days twelve months earlier (a whole month stays a whole month: 29 Feb becomes 28 Feb)."""

    def back(day: date) -> date:
        try:
            return day.replace(year=day.year - 1)
        except ValueError:  # 29 February
            return day.replace(year=day.year - 1, day=28)

    end = period.end
    if (end + timedelta(days=1)).day == 1:  # ends on a month's last day: so does last year's
        last = add_months(end.replace(day=1), -12)
        before_end = add_months(last, 1) - timedelta(days=1)
    else:
        before_end = back(end)
    return Period(back(period.start), before_end, f"{back(period.start)} – {before_end}", period.kind)


@dataclass(frozen=True)
class YearBefore:
    """Last year's figures for the same period, and which of them its filing hides (False on the page)."""

    start: str
    end: str
    minutes: int
    sessions: int
    volunteers: int
    employees: int
    total_hidden: bool = False
    count_hidden: bool = False
    participation_hidden: bool = False
    report_id: str = ""  # the filing it was taken from; "" on the page

    @property
    def participation(self) -> float | None:
        return round(100 * self.volunteers / self.employees, 1) if self.employees else None

    @classmethod
    def of(cls, period: Period, figures, **hidden) -> YearBefore:
        """Last year's period with its figures (reports.figures.Figures), and what of them is hidden."""
        total = figures.total
        return cls(
            period.start.isoformat(),
            period.end.isoformat(),
            total.minutes,
            total.sessions,
            total.volunteers,
            figures.employees,
            **hidden,
        )

    @classmethod
    def zero(cls, period: Period) -> YearBefore:
        """A year before without any session: nothing to file, and a zero describes nobody."""
        return cls(period.start.isoformat(), period.end.isoformat(), 0, 0, 0, 0)


@dataclass(frozen=True)
class Comparison:
    """What a report compares its figures with: its year's goal and the year before.

    `goal_minutes`: the hours measured against the hours goal (the period's, or the year to date
    through the period's end), None when not measured; `goal_through`: the last day they count.
    Participation is measured against its goal only over the year, or the year to date, itself."""

    goal: Goal | None = None
    goal_minutes: int | None = None
    goal_minutes_hidden: bool = False
    goal_through: str = ""
    goal_year_to_date: bool = False  # the hours run from the year's start to goal_through, before its end
    goal_participation: bool = False  # the period's participation is measured against the goal (it starts the year)
    before: YearBefore | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> Comparison | None:
        if data is None:
            return None
        return cls(
            goal=Goal(**data["goal"]) if data.get("goal") else None,
            goal_minutes=data.get("goal_minutes"),
            goal_minutes_hidden=data.get("goal_minutes_hidden", False),
            goal_through=data.get("goal_through", ""),
            goal_year_to_date=data.get("goal_year_to_date", False),
            goal_participation=data.get("goal_participation", False),
            before=YearBefore(**data["before"]) if data.get("before") else None,
        )


HIDDEN_WORD = N_("hidden")


@dataclass(frozen=True)
class Line:
    """One row of the comparison as every output prints it: the figure's name, this period, last year, change."""

    name: str
    now: str
    before: str
    change: str


def _share(value: Decimal, goal: Decimal, language: str) -> str:
    """Progress in whole percent, half up: 412.5 of 600 is 69 %."""
    whole = (100 * value / goal).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return percent(whole, language, 0)


def goal_lines(
    comparison: Comparison | None,
    *,
    participation: float | None,
    participation_hidden: bool,
    language: str,
) -> list[str]:
    """The goal's progress as sentences ("412.50 of 600 hours, 69 %"), hidden as the figures they come
    from. `participation`: the period's (None: no participation to measure); measured only over the
    year itself, or the year to date."""
    if comparison is None or comparison.goal is None or not comparison.goal.any:
        return []
    goal, hidden = comparison.goal, translate(language, HIDDEN_WORD)
    lines = []
    if goal.hours is not None and comparison.goal_minutes is not None:
        target = Decimal(goal.hours)
        if comparison.goal_minutes_hidden:
            progress = hidden
        elif target == 0:
            progress = translate(language, "%(hours)s hours", hours=hours_text(comparison.goal_minutes, language))
        else:
            progress = translate(
                language,
                "%(hours)s of %(goal)s hours, %(share)s",
                hours=hours_text(comparison.goal_minutes, language),
                goal=number(target, language),
                share=_share(hours_of(comparison.goal_minutes), target, language),
            )
        if comparison.goal_year_to_date:
            lines.append(
                translate(
                    language,
                    "Hours goal, year to date (through %(day)s): %(progress)s",
                    day=comparison.goal_through,
                    progress=progress,
                )
            )
        else:
            lines.append(translate(language, "Hours goal: %(progress)s", progress=progress))
    if goal.participation is not None and comparison.goal_participation:
        target = Decimal(goal.participation)
        if participation_hidden:
            progress = hidden
        elif participation is None:
            progress = "–"
        elif target == 0:
            progress = percent(participation, language, 1)
        else:
            progress = translate(
                language,
                "%(rate)s of %(goal)s, %(share)s of the goal",
                rate=percent(participation, language, 1),
                goal=percent(target, language, 0 if target == target.to_integral() else 1),
                share=_share(Decimal(str(participation)), target, language),
            )
        lines.append(translate(language, "Participation goal: %(progress)s", progress=progress))
    elif goal.participation is not None:
        lines.append(
            translate(
                language,
                "Participation goal: %(goal)s, measured over the whole year in the year's report.",
                goal=percent(Decimal(goal.participation), language, 1),
            )
        )
    return lines


def before_lines(
    comparison: Comparison | None,
    *,
    figures,
    total_hidden: bool,
    count_hidden: bool,
    participation_hidden: bool,
    language: str,
) -> list[Line]:
    """This period against the same period last year: hours, sessions, volunteers, participation.

    `figures`: this period's (reports.figures.Figures); the *_hidden flags: what this output hides of
    them. A value hidden on either side hides the change as well."""
    if comparison is None or comparison.before is None or not comparison.before.sessions:
        return []  # no sessions last year: a table of zeros would only look like data (before_note says so)
    b, hidden = comparison.before, translate(language, HIDDEN_WORD)

    def rate(value: float | None) -> str:
        return "–" if value is None else percent(value, language, 1)

    now_rate, before_rate = figures.participation, b.participation
    rate_change = (
        "–"
        if now_rate is None or before_rate is None
        else translate(
            language,
            "%(points)s points",
            points=signed_number(Decimal(str(now_rate)) - Decimal(str(before_rate)), language, 1),
        )
    )
    rows = [
        (
            translate(language, "Verified hours"),
            hours_text(figures.total.minutes, language),
            hours_text(b.minutes, language),
            signed_hours_text(hours_of(figures.total.minutes) - hours_of(b.minutes), language),
            total_hidden,
            b.total_hidden,
        ),
        (
            translate(language, "Sessions"),
            number(figures.total.sessions, language),
            number(b.sessions, language),
            signed_number(figures.total.sessions - b.sessions, language, 0),
            total_hidden,
            b.total_hidden,
        ),
        (
            translate(language, "Active volunteers"),
            number(figures.total.volunteers, language),
            number(b.volunteers, language),
            signed_number(figures.total.volunteers - b.volunteers, language, 0),
            count_hidden,
            b.count_hidden,
        ),
        (
            translate(language, "Participation"),
            rate(now_rate),
            rate(before_rate),
            rate_change,
            participation_hidden,
            b.participation_hidden,
        ),
    ]
    return [
        Line(
            name,
            hidden if now_hidden else now,
            hidden if before_hidden else before,
            hidden if now_hidden or before_hidden else change,
        )
        for name, now, before, change, now_hidden, before_hidden in rows
    ]


def before_note(comparison: Comparison | None, language: str) -> str | None:
    """What stands in for the comparison when the same period last year had no sessions."""
    if comparison is None or comparison.before is None or comparison.before.sessions:
        return None
    b = comparison.before
    return translate(
        language, "No attended sessions in the same period last year (%(start)s to %(end)s).", start=b.start, end=b.end
    )


# Named in the method section: a published benchmark, with its source and year, and no figure we could
# not cite exactly (Giving in Numbers reports the participation of large companies' employees).
BENCHMARK = N_(
    "For a benchmark of participation, CECP's yearly Giving in Numbers report (CECP, the Chief Executives for "
    "Corporate Purpose, New York; for example its 2023 edition) publishes the share of employees who volunteer "
    "at large companies. Its method differs: it counts all volunteering a company records, not only attended "
    "sessions, so compare with care."
)
