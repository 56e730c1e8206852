from wtforms import EmailField, PasswordField
from wtforms.validators import DataRequired, Email, Length

from portal.web.forms import PortalForm


class LoginForm(PortalForm):
    email = EmailField("Email", validators=[DataRequired(), Email(), Length(max=254)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=1024)])
