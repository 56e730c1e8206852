from flask_babel import lazy_gettext as _l
from wtforms import EmailField, PasswordField
from wtforms.validators import DataRequired, Email, Length

from portal.web.forms import PortalForm


class AddressForm(PortalForm):
    """The sign-in page's first step: the address alone, which says where its owner signs in."""

    email = EmailField(_l("Email"), validators=[DataRequired(), Email(), Length(max=254)])


class LoginForm(AddressForm):
    password = PasswordField(_l("Password"), validators=[DataRequired(), Length(max=1024)])
