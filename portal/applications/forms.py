import re

from flask_babel import gettext as _
from wtforms import HiddenField, IntegerField, StringField, TextAreaField
from wtforms.validators import (
    AnyOf,
    DataRequired,
    InputRequired,
    Length,
    NumberRange,
    Optional,
    StopValidation,
    ValidationError,
)
from wtforms.widgets import HiddenInput, TextInput

from portal.applications.states import DECISIONS, EMAIL_MAX, EMPLOYEES_MAX, MESSAGE_MAX, NAME_MAX, NOTE_MAX
from portal.core.i18n import N_
from portal.core.text import strip
from portal.web.forms import PortalForm, too_long_text
from portal.web.forms import lazy_text as _l
from portal.web.public_forms import PublicForm, work_email_field

_GROUPED_DIGITS = re.compile(r"^\d{1,3}([ ,]\d{3})+$")  # 1,200 or 1 200


CHOOSE_DECISION = _l("Choose approve, decline or ask for more information.")
MESSAGE_TOO_LONG = too_long_text(N_("Keep it under %(max)s characters."), MESSAGE_MAX)
NOTE_TOO_LONG = too_long_text(N_("Keep the note under %(max)s characters."), NOTE_MAX)


class WholeNumberField(IntegerField):
    """A whole number typed into a text box (GOV.UK style), with a message people understand."""

    widget = TextInput()

    def process_formdata(self, valuelist):
        if not valuelist:
            return
        raw = valuelist[0].strip()
        if _GROUPED_DIGITS.match(raw):
            raw = raw.replace(",", "").replace(" ", "")
        if raw == "":
            self.data = None
            return
        # ASCII digits only: "²".isdigit() is true, yet int("²") fails.
        if not (raw.isascii() and raw.isdigit()):
            self.data = None
            raise ValueError(_("Enter a whole number, like 250."))
        self.data = int(raw)

    def pre_validate(self, form):
        # Not a number: that one message, without "of at least 1" from the range check after it.
        if self.process_errors:
            raise StopValidation()


class ApplicationForm(PublicForm):
    company_name = StringField(
        _l("Company name"),
        filters=[strip],
        validators=[DataRequired(_l("Enter your company's name.")), Length(max=NAME_MAX)],
    )
    contact_name = StringField(
        _l("Your name"),
        filters=[strip],
        validators=[DataRequired(_l("Enter your name.")), Length(max=NAME_MAX)],
    )
    contact_email = work_email_field(EMAIL_MAX)
    employee_count = WholeNumberField(
        _l("Number of employees"),
        validators=[
            InputRequired(_l("Enter how many people work at your company.")),
            NumberRange(min=1, max=EMPLOYEES_MAX, message=_l("Enter a whole number of at least 1.")),
        ],
    )
    message = TextAreaField(
        _l("Why would you like to partner with TEEI?"),
        filters=[strip],
        validators=[Optional(), Length(max=MESSAGE_MAX, message=MESSAGE_TOO_LONG)],
    )


# Decisions the admin confirms on a page of their own: none can be taken back (a decline is final;
# an approval creates the company and emails an invitation; asking for more information emails the
# applicant at once, though the application stays open).
CONFIRMED_DECISIONS = ("approve", "decline", "request_info")


class DecisionForm(PortalForm):
    decision = HiddenField(
        _l("Decision"),
        validators=[InputRequired(CHOOSE_DECISION), AnyOf(list(DECISIONS), message=CHOOSE_DECISION)],
    )
    note = TextAreaField(
        _l("Note to the applicant"),
        filters=[strip],
        validators=[Length(max=NOTE_MAX, message=NOTE_TOO_LONG)],
    )
    # How many decisions the page showed: a stale page or a replay is recognised by it.
    decisions_seen = IntegerField(widget=HiddenInput(), validators=[Optional()])
    # The detail page's form sends "ask", so approving and declining in the browser go through a
    # confirmation page, which sends "yes". A request without the field (the contract's
    # `decision` and `note` alone, as a script sends them) decides at once.
    confirmed = HiddenField()

    @property
    def needs_confirmation(self) -> bool:
        return self.decision.data in CONFIRMED_DECISIONS and self.confirmed.data == "ask"

    def validate_note(self, field):
        if self.decision.data == "request_info" and not field.data:
            raise ValidationError(_("Say what information you need, so the applicant can answer."))
