"""The report's query string, read and checked in one place: `from`, `to`, `programme`.

Bad input never reaches a query: `parse_report_query` returns the messages to show (answered with
400, in the page's language), or a ReportQuery whose period and programme are known to be sound.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from wtforms import RadioField, SelectField, StringField, ValidationError
from wtforms.fields.choices import SelectChoice
from wtforms.validators import InputRequired, Length, Regexp

from portal.core.i18n import N_, day
from portal.core.periods import Period, add_months, label_for, presets
from portal.core.text import strip
from portal.reports.goals import Goal
from portal.reports.queries import ReportSettings
from portal.reports.selection import PROGRAMME_CHOICES, Drill, ReportQuery
from portal.web.forms import EARLIEST_DAY, LATEST_DAY, PortalForm, day_out_of_range
from portal.web.i18n import current_language

MAX_YEARS = 5
MAX_GOAL_HOURS = Decimal(10_000_000)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DAY_FIRST = re.compile(r"^(?P<day>\d{1,2})\.(?P<month>\d{1,2})\.(?P<year>\d{4})$")


@dataclass
class QueryErrors:
    messages: list[str] = field(default_factory=list)
    values: dict = field(default_factory=dict)


def parse_date(raw: str, name: str, errors: list[str]) -> date | None:
    """YYYY-MM-DD (the links' and CONTRACT.md's form), or day first as people here write it: 31.03.2026."""
    day_first = _DAY_FIRST.match(raw)
    if day_first:
        raw = f"{day_first['year']}-{int(day_first['month']):02d}-{int(day_first['day']):02d}"
    if not _DATE.match(raw):
        errors.append(
            _(
                "“%(name)s” must be a date, day first or year first: 31.03.2026 or 2026-03-31 (got “%(got)s”).",
                name=name,
                got=raw[:20],
            )
        )
        return None
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        errors.append(_("“%(name)s” is not a real date: %(raw)s does not exist in the calendar.", name=name, raw=raw))
        return None
    if day_out_of_range(day):
        errors.append(
            _(
                "“%(name)s” must fall between %(first)s and %(last)s (got %(raw)s).",
                name=name,
                first=EARLIEST_DAY.year,
                last=LATEST_DAY.year,
                raw=raw,
            )
        )
        return None
    return day


def parse_report_query(args, today: date, fiscal_start_month: int = 1) -> ReportQuery | QueryErrors:
    """The report's query from request args; with no dates, year to date."""
    errors: list[str] = []
    programme = (args.get("programme") or "all").strip()
    if programme not in PROGRAMME_CHOICES:
        errors.append(
            _("Programme must be one of: all, language, mentorship (got “%(programme)s”).", programme=programme[:30])
        )
    raw_from, raw_to = (args.get("from") or "").strip(), (args.get("to") or "").strip()
    if not raw_from and not raw_to:
        period = next(p for p in presets(today, fiscal_start_month) if p.kind == "year_to_date")
    elif not raw_from or not raw_to:
        errors.append(_("Give both dates of a custom period: “from” and “to”."))
        period = None
    else:
        start, end = parse_date(raw_from, _("from"), errors), parse_date(raw_to, _("to"), errors)
        period = None
        if start and end:
            if end < start:
                errors.append(
                    _(
                        "“to” (%(end)s) is before “from” (%(start)s): the end of a period comes after its start.",
                        end=end,
                        start=start,
                    )
                )
            elif end >= add_months(start.replace(day=1), 12 * MAX_YEARS) + timedelta(days=start.day - 1):
                errors.append(_("A report covers at most %(years)s years; choose a shorter period.", years=MAX_YEARS))
            else:
                period = Period(start, end, label_for(start, end, today, fiscal_start_month))
    if errors:
        return QueryErrors(errors, {"from": raw_from, "to": raw_to, "programme": programme})
    return ReportQuery(period, programme)


def parse_drill(args, today: date, fiscal_start_month: int = 1) -> Drill | QueryErrors:
    """A figure's list from request args: the report's query (`from`, `to`, `programme`) and at most
    one of `volunteer` (a colleague's user id) and `department` (empty: colleagues without one)."""
    query = parse_report_query(args, today, fiscal_start_month)
    errors = list(query.messages) if isinstance(query, QueryErrors) else []
    raw_volunteer, department = (args.get("volunteer") or "").strip(), args.get("department")
    volunteer = None
    if raw_volunteer:
        if raw_volunteer.isdigit() and 0 < int(raw_volunteer) < 2**63:
            volunteer = int(raw_volunteer)
        else:
            errors.append(_("“volunteer” must be a colleague's number (got “%(got)s”).", got=raw_volunteer[:20]))
    if department is not None and len(department) > 500:
        errors.append(_("“department” is too long (at most %(max)d characters).", max=500))
    if volunteer is not None and department is not None:
        errors.append(_("A list is of one colleague or of one department, not both."))
    if errors:
        values = query.values if isinstance(query, QueryErrors) else query.args
        return QueryErrors(errors, values)
    return Drill(query, volunteer, department)


SHARE_MESSAGE = N_("Share of hours in company time: a whole number from 0 to 100.")


class ReportSettingsForm(PortalForm):
    """How the report counts money and years. Refused, it comes back with what was typed, each
    message next to its field (issue 47, item 7): a person corrects one answer, not all four."""

    fiscal_year_start_month = SelectField(
        _l("Fiscal year starts in"),
        coerce=int,
        validators=[InputRequired(message=_l("Fiscal year start: choose a month."))],
    )
    hourly_cost = StringField(
        _l("Hourly cost of employee time (B4SI)"),
        description=_l("Salary, overheads and pension for one hour, on average."),
        validators=[Length(max=40)],
    )
    currency = StringField(
        _l("Currency"),
        validators=[
            InputRequired(message=_l("Currency: a three-letter code, like NOK or EUR.")),
            Regexp(r"^\s*[A-Za-z]{3}\s*$", message=_l("Currency: a three-letter code, like NOK or EUR.")),
        ],
    )
    # Text with a numeric keyboard, not type=number (GOV.UK's advice): what was typed comes back as typed.
    company_time_percent = StringField(
        _l("Share of hours given in company time (%)"),
        validators=[InputRequired(message=_l(SHARE_MESSAGE))],
    )

    def __init__(self, *args, months: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fiscal_year_start_month.choices = [SelectChoice(n, name) for n, name in enumerate(months, start=1)]
        self.cost: Decimal | None = None
        self.share = 100

    @classmethod
    def of(cls, settings: ReportSettings, *, months: list[str]) -> ReportSettingsForm:
        """The form showing the saved settings."""
        return cls(
            formdata=None,
            data={**asdict(settings), "company_time_percent": str(settings.company_time_percent)},
            months=months,
        )

    def validate_hourly_cost(self, field) -> None:
        raw = (field.data or "").strip().replace(" ", "").replace(",", ".")
        if not raw:
            return
        try:
            cost = Decimal(raw)
            if not cost.is_finite() or cost < 0 or cost > 100000:
                raise InvalidOperation
        except InvalidOperation:
            raise ValidationError(_("Hourly cost: a positive amount, like 650 or 650.50.")) from None
        self.cost = cost.quantize(Decimal("0.01"))

    def validate_company_time_percent(self, field) -> None:
        raw = (field.data or "").strip()
        if not raw.isascii() or not raw.isdigit() or not 0 <= int(raw) <= 100:
            raise ValidationError(_(SHARE_MESSAGE))
        self.share = int(raw)

    def settings(self) -> ReportSettings:
        """The validated answers, as the settings to save."""
        return ReportSettings(
            self.fiscal_year_start_month.data,
            None if self.cost is None else str(self.cost),
            self.currency.data.strip().upper(),
            self.share,
        )


def _decimal_or_none(raw: str | None, high: Decimal) -> Decimal | None:
    """A number from 0 to `high` (comma or point, spaces as thousands separators); ValueError otherwise."""
    text = (raw or "").strip().replace(" ", "").replace("\u00a0", "").replace(",", ".")
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError from None
    if not value.is_finite() or value < 0 or value > high:
        raise ValueError
    return value


class GoalsForm(PortalForm):
    """A report year's goals (issue 50): hours, and participation in percent; empty: no goal of that kind."""

    year_start = SelectField(_l("Year"))
    goal_hours = StringField(_l("Hours goal"), render_kw={"inputmode": "decimal", "autocomplete": "off"})
    goal_participation = StringField(
        _l("Participation goal (%)"), render_kw={"inputmode": "decimal", "autocomplete": "off"}
    )

    def validate_goal_hours(self, field) -> None:
        try:
            value = _decimal_or_none(field.data, MAX_GOAL_HOURS)
        except ValueError:
            raise ValidationError(_("A number of hours, 0 or more, like 600 or 1 250.5.")) from None
        field.parsed = None if value is None else value.quantize(Decimal("0.01")).normalize()

    def validate_goal_participation(self, field) -> None:
        try:
            value = _decimal_or_none(field.data, Decimal(100))
        except ValueError:
            raise ValidationError(_("A share of colleagues from 0 to 100, like 25 or 12.5.")) from None
        field.parsed = None if value is None else value.quantize(Decimal("0.1")).normalize()

    def goal(self) -> Goal:
        """The valid form's goal, for the chosen year (its end is filled in by the caller's year)."""
        hours, share = self.goal_hours.parsed, self.goal_participation.parsed
        return Goal(
            self.year_start.data,
            "",
            None if hours is None else f"{hours:f}",
            None if share is None else f"{share:f}",
        )


class OwnTimeForm(PortalForm):
    """A volunteer's choice: do their own-time hours count in their employer's report (issue 50)."""

    count_own_time = RadioField(
        _l("Your choice"),
        choices=[
            ("yes", _l("Count them in my employer's report")),
            ("no", _l("Do not count them (working-time hours always count)")),
        ],
    )


class CertificateForm(PortalForm):
    """The period of a volunteer's certificate: `from` and `to`, local days, inclusive. A GET form
    (the PDF is its answer, and asking twice issues nothing new), so no CSRF token."""

    class Meta:
        csrf = False

    start = StringField(_l("From"), name="from", filters=[strip])
    end = StringField(_l("To"), name="to", filters=[strip])

    def fill_this_year(self, today: date) -> None:
        """The form as first offered: this year so far, written day first as people here write it."""
        self.start.data = f"01.01.{today.year}"
        self.end.data = f"{today:%d.%m.%Y}"

    def period(self, today: date) -> Period | None:
        """The chosen period, or None with each problem on its field: both dates real, the end not
        before the start and not after today (a certificate states hours given, not hours to come)."""
        missing = {
            "from": _("Enter the first day of the period, like 01.01.%(year)s.", year=today.year),
            "to": _("Enter the last day of the period, like 31.12.%(year)s.", year=today.year),
        }
        found = {}
        for box in (self.start, self.end):
            errors: list[str] = []
            if not box.data:
                box.errors = [missing[box.name]]
                continue
            found[box.name] = parse_date(box.data, box.label.text, errors)
            box.errors = errors
        start, end = found.get("from"), found.get("to")
        if start is None or end is None:
            return None
        if end < start:
            self.end.errors = [_("The end of the period must be on or after its start.")]
            return None
        if end > today:
            self.end.errors = [
                _("The period cannot end after today (%(today)s).", today=day(today, current_language()))
            ]
            return None
        return Period(start, end, "")
