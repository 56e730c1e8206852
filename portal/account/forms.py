from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from wtforms import EmailField, PasswordField, StringField
from wtforms.validators import DataRequired, Email, Length, Optional

from portal.account.operations import NAME_MAX
from portal.auth import MIN_PASSWORD_LENGTH
from portal.web.forms import PortalForm

_NEW_PASSWORD = Length(
    min=MIN_PASSWORD_LENGTH, max=1024, message=_l("Use at least %(num)d characters.", num=MIN_PASSWORD_LENGTH)
)


class ForgotPasswordForm(PortalForm):
    email = EmailField(
        _l("Email"),
        validators=[DataRequired(message=_l("Enter the email address you sign in with.")), Email(), Length(max=254)],
    )


class ResetPasswordForm(PortalForm):
    password = PasswordField(
        _l("New password"), validators=[DataRequired(message=_l("Choose a new password.")), _NEW_PASSWORD]
    )


class AccountForm(PortalForm):
    name = StringField(
        _l("Your name"), validators=[DataRequired(message=_l("Tell us your name.")), Length(max=NAME_MAX)]
    )
    current_password = PasswordField(_l("Current password"), validators=[Optional(), Length(max=1024)])
    new_password = PasswordField(_l("New password"), validators=[Optional(), _NEW_PASSWORD])

    def validate(self, extra_validators=None):
        valid = super().validate(extra_validators)
        if self.new_password.data and not self.current_password.data:
            self.current_password.errors.append(_("Enter your current password to set a new one."))
            return False
        return valid
