from flask_wtf import FlaskForm
from wtforms import EmailField
from wtforms.validators import DataRequired, Email, Length


class InviteManagerForm(FlaskForm):
    email = EmailField(
        "Email address",
        validators=[DataRequired(message="Enter the new manager's email address."), Email(), Length(max=254)],
    )


class ConfirmForm(FlaskForm):
    """A confirmation step: only the CSRF token."""
