from flask_babel import lazy_gettext as _l
from wtforms import BooleanField, EmailField, HiddenField, PasswordField
from wtforms.validators import AnyOf, DataRequired, Email, Length, Optional

from portal.core.text import strip
from portal.web.forms import PortalForm


class FindPersonForm(PortalForm):
    """An admin looks a person up by address: a POST, so the address never sits in a URL or a log."""

    email = EmailField(
        _l("Email address"),
        filters=[strip],
        validators=[DataRequired(message=_l("Enter the person's email address.")), Email(), Length(max=254)],
    )


class PersonActionForm(FindPersonForm):
    """Download or erase, for the address the summary showed; `confirmed` is set by the erase page."""

    email = HiddenField(filters=[strip], validators=[DataRequired(), Length(max=254)])
    confirmed = HiddenField(validators=[Optional(), AnyOf(["yes"])])


class EraseOwnAccountForm(PortalForm):
    current_password = PasswordField(
        _l("Your password"), validators=[DataRequired(message=_l("Enter your password to erase your account."))]
    )
    understood = BooleanField(
        _l("I understand that my account and what it holds are erased for good"),
        validators=[DataRequired(message=_l("Tick the box to confirm."))],
    )
