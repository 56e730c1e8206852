from wtforms import HiddenField, SelectField, StringField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional, Regexp, ValidationError

from portal.campaigns.markdown import MAX_BODY_BYTES
from portal.campaigns.operations import MAX_NAME, MAX_SUBJECT
from portal.core.text import strip
from portal.web.forms import PortalForm, RequestIdField

CHOOSE_AUDIENCE = "Choose an audience."


class ComposeForm(PortalForm):
    """A new campaign, or a draft edited: the same fields either way."""

    name = StringField(
        "Name (for admins only)",
        filters=[strip],
        validators=[DataRequired(message="Give the campaign a name."), Length(max=MAX_NAME)],
    )
    subject = StringField(
        "Subject", filters=[strip], validators=[DataRequired(message="Write a subject."), Length(max=MAX_SUBJECT)]
    )
    # The first option is an empty "Choose an audience": required, so choosing nothing is a field error.
    audience = SelectField("Audience", validate_choice=False, validators=[DataRequired(message=CHOOSE_AUDIENCE)])
    # In the page's order, so the error summary lists the fields as the page shows them.
    body = TextAreaField("Body (Markdown)", validators=[DataRequired(message="Write the body of the email.")])

    def validate_body(self, field):
        if len((field.data or "").encode("utf-8")) > MAX_BODY_BYTES:
            raise ValidationError(
                f"The body is over {MAX_BODY_BYTES // 1024} KB. Shorten it, or link to a page instead."
            )

    def validate_audience(self, field):
        if field.data not in {value for value, _ in field.choices}:
            raise ValidationError("Choose an audience from the list.")


class TestSendForm(PortalForm):
    request_id = RequestIdField()  # posting the same page twice (a double click) is one email


class SendForm(PortalForm):
    """Send now or at a time. Without `confirm_reach` it only asks: the confirmation page states how
    many people it reaches and posts that number back, so a send never reaches more than was shown."""

    send_at = StringField("Send at (optional)", filters=[strip], validators=[Optional(), Length(max=40)])
    confirm_reach = HiddenField(
        filters=[strip], validators=[Optional(), Regexp(r"^[0-9]{1,9}$", message="Reload the page and try again.")]
    )


class CancelForm(PortalForm):
    pass


class DuplicateForm(PortalForm):
    pass


class ResubscribeForm(PortalForm):
    pass
