from flask_babel import lazy_gettext as _l
from wtforms import EmailField, PasswordField
from wtforms.validators import DataRequired, Email, Length

from portal.web.forms import PortalForm


class LoginForm(PortalForm):
    email = EmailField(_l("Email"), validators=[DataRequired(), Email(), Length(max=254)])
    password = PasswordField(_l("Password"), validators=[DataRequired(), Length(max=1024)])
