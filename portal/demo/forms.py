from wtforms import StringField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional

from portal.core.text import strip
from portal.demo.operations import EMAIL_MAX, MESSAGE_MAX, NAME_MAX
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
