from wtforms import EmailField, PasswordField, StringField
from wtforms.validators import DataRequired, Email, Length, Optional

from portal.account.operations import NAME_MAX
from portal.auth import MIN_PASSWORD_LENGTH
from portal.web.forms import PortalForm

_NEW_PASSWORD = Length(min=MIN_PASSWORD_LENGTH, max=1024, message=f"Use at least {MIN_PASSWORD_LENGTH} characters.")


class ForgotPasswordForm(PortalForm):
    email = EmailField(
        "Email",
        validators=[DataRequired(message="Enter the email address you sign in with."), Email(), Length(max=254)],
    )


class ResetPasswordForm(PortalForm):
    password = PasswordField("New password", validators=[DataRequired(message="Choose a new password."), _NEW_PASSWORD])


class AccountForm(PortalForm):
    name = StringField("Your name", validators=[DataRequired(message="Tell us your name."), Length(max=NAME_MAX)])
    current_password = PasswordField("Current password", validators=[Optional(), Length(max=1024)])
    new_password = PasswordField("New password", validators=[Optional(), _NEW_PASSWORD])

    def validate(self, extra_validators=None):
        valid = super().validate(extra_validators)
        if self.new_password.data and not self.current_password.data:
            self.current_password.errors.append("Enter your current password to set a new one.")
            return False
        return valid
