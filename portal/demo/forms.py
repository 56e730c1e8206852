from wtforms import SelectField, StringField, TextAreaField
from wtforms.validators import AnyOf, DataRequired, InputRequired, Length, Optional

from portal.core.i18n import N_
from portal.core.text import strip
from portal.demo.operations import EMAIL_MAX, MESSAGE_MAX, NAME_MAX, NOTE_MAX, STATUS_LABELS
from portal.web.forms import PortalForm, too_long_text
from portal.web.forms import lazy_text as _l
from portal.web.public_forms import PublicForm, work_email_field

CHOOSE_STATUS = _l("Choose new, contacted or done.")
MESSAGE_TOO_LONG = too_long_text(N_("Keep it under %(max)s characters."), MESSAGE_MAX)
NOTE_TOO_LONG = too_long_text(N_("Keep the note under %(max)s characters."), NOTE_MAX)


class DemoRequestForm(PublicForm):
    name = StringField(
        _l("Your name"),
        filters=[strip],
        validators=[DataRequired(_l("Enter your name.")), Length(max=NAME_MAX)],
    )
    email = work_email_field(EMAIL_MAX)
    company = StringField(
        _l("Company"),
        filters=[strip],
        validators=[DataRequired(_l("Enter your company's name.")), Length(max=NAME_MAX)],
    )
    message = TextAreaField(
        _l("Anything we should know?"),
        filters=[strip],
        validators=[Optional(), Length(max=MESSAGE_MAX, message=MESSAGE_TOO_LONG)],
    )


class FollowUpForm(PortalForm):
    """Where sales stands with one demo request, and a note for colleagues."""

    # A missing or unknown status is a field error, never a 500 (issue 26).
    status = SelectField(
        _l("Status"),
        # The labels are marked where they are defined (operations.py); shown in the page's language.
        choices=[(status, _l(label)) for status, label in STATUS_LABELS.items()],
        validators=[InputRequired(CHOOSE_STATUS), AnyOf(list(STATUS_LABELS), message=CHOOSE_STATUS)],
        validate_choice=False,
    )
    note = TextAreaField(
        _l("Note for colleagues"),
        filters=[strip],
        validators=[Length(max=NOTE_MAX, message=NOTE_TOO_LONG)],
    )
