from wtforms import SelectField, StringField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional, ValidationError

from portal.campaigns.markdown import MAX_BODY_BYTES
from portal.campaigns.operations import MAX_NAME, MAX_SUBJECT
from portal.core.text import strip
from portal.web.forms import PortalForm, RequestIdField


class ComposeForm(PortalForm):
    name = StringField(
        "Name (for admins only)",
        filters=[strip],
        validators=[DataRequired(message="Give the campaign a name."), Length(max=MAX_NAME)],
    )
    subject = StringField(
        "Subject", filters=[strip], validators=[DataRequired(message="Write a subject."), Length(max=MAX_SUBJECT)]
    )
    body = TextAreaField("Body (Markdown)", validators=[DataRequired(message="Write the body of the email.")])
    audience = SelectField("Audience", validate_choice=False)

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
    send_at = StringField("Send at (optional)", filters=[strip], validators=[Optional(), Length(max=40)])


class CancelForm(PortalForm):
    pass


class ResubscribeForm(PortalForm):
    pass
