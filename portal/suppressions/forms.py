from flask_wtf import FlaskForm
from wtforms import EmailField, HiddenField, StringField
from wtforms.validators import DataRequired, Email, Length

REASON_MAX = 200


def _strip(value):
    return value.strip() if isinstance(value, str) else value


class SearchForm(FlaskForm):
    class Meta:
        csrf = False  # a GET search changes nothing

    q = StringField("Search addresses", filters=[_strip], validators=[Length(max=254)])


class AddSuppressionForm(FlaskForm):
    email = EmailField("Email address", filters=[_strip], validators=[DataRequired(), Email(), Length(max=254)])
    reason = StringField("Reason", filters=[_strip], validators=[DataRequired(), Length(max=REASON_MAX)])


class RemoveSuppressionForm(FlaskForm):
    email = HiddenField("Email address", filters=[_strip], validators=[DataRequired(), Email(), Length(max=254)])
    reason = StringField("Reason for removing", filters=[_strip], validators=[DataRequired(), Length(max=REASON_MAX)])
