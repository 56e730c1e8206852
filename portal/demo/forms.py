from flask_wtf import FlaskForm
from wtforms import EmailField, StringField, TextAreaField
from wtforms.validators import DataRequired, Email, Length, Optional

from portal.demo.service import EMAIL_MAX, MESSAGE_MAX, NAME_MAX


def _strip(value):
    return value.strip() if isinstance(value, str) else value


class DemoRequestForm(FlaskForm):
    name = StringField("Your name", filters=[_strip],
                       validators=[DataRequired("Enter your name."), Length(max=NAME_MAX)])
    email = EmailField(
        "Work email", filters=[_strip],
        validators=[DataRequired("Enter your work email address."),
                    Email("Enter an email address like name@company.com."), Length(max=EMAIL_MAX)],
    )
    company = StringField("Company", filters=[_strip],
                          validators=[DataRequired("Enter your company's name."), Length(max=NAME_MAX)])
    message = TextAreaField(
        "Anything we should know?", filters=[_strip],
        validators=[Optional(), Length(max=MESSAGE_MAX, message=f"Keep it under {MESSAGE_MAX:,} characters.")],
    )
    # Hidden from people; bots fill it in. A filled-in form is answered as accepted and dropped.
    website = StringField("Leave this field empty", filters=[_strip])
