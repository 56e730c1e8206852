from wtforms import SelectField, StringField, TextAreaField
from wtforms.validators import AnyOf, DataRequired, InputRequired, Length, Optional

from portal.core.text import strip
from portal.demo.operations import EMAIL_MAX, MESSAGE_MAX, NAME_MAX, NOTE_MAX, STATUS_LABELS
from portal.web.forms import PortalForm
from portal.web.public_forms import PublicForm, work_email_field


class DemoRequestForm(PublicForm):
    name = StringField(
        "Your name", filters=[strip], validators=[DataRequired("Enter your name."), Length(max=NAME_MAX)]
    )
    email = work_email_field(EMAIL_MAX)
    company = StringField(
        "Company", filters=[strip], validators=[DataRequired("Enter your company's name."), Length(max=NAME_MAX)]
    )
    message = TextAreaField(
        "Anything we should know?",
        filters=[strip],
        validators=[Optional(), Length(max=MESSAGE_MAX, message=f"Keep it under {MESSAGE_MAX:,} characters.")],
    )


class FollowUpForm(PortalForm):
    """Where sales stands with one demo request, and a note for colleagues."""

    # A missing or unknown status is a field error, never a 500 (issue 26).
    status = SelectField(
        "Status",
        choices=list(STATUS_LABELS.items()),
        validators=[
            InputRequired("Choose new, contacted or done."),
            AnyOf(list(STATUS_LABELS), message="Choose new, contacted or done."),
        ],
        validate_choice=False,
    )
    note = TextAreaField(
        "Note for colleagues",
        filters=[strip],
        validators=[Length(max=NOTE_MAX, message=f"Keep the note under {NOTE_MAX:,} characters.")],
    )
