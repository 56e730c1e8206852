from flask_babel import lazy_gettext as _l
from wtforms import BooleanField, PasswordField, RadioField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, Optional

from portal.core.programmes import PROGRAMMES
from portal.web.forms import PortalForm


class ProviderForm(PortalForm):
    issuer = StringField(_l("Issuer URL"), validators=[DataRequired(), Length(max=500)])
    client_id = StringField(_l("Client ID"), validators=[DataRequired(), Length(max=500)])
    client_secret = PasswordField(_l("Client secret"), validators=[Optional(), Length(max=1000)])
    domains = TextAreaField(_l("Email domains the provider vouches for"), validators=[DataRequired(), Length(max=2000)])
    join = RadioField(
        _l("Colleagues without an account"),
        choices=[
            SelectChoice("invitation", _l("Need an invitation, as before")),
            *(
                SelectChoice(code, _l("Join as volunteers of %(programme)s", programme=name))
                for code, name in PROGRAMMES.items()
            ),
        ],
        default="invitation",
    )
    directory_creates = RadioField(
        _l("A user your directory creates over SCIM"),
        choices=[
            SelectChoice("invite", _l("Gets an invitation email, as from the Invitations page")),
            SelectChoice("provision", _l("Gets a volunteer account at once, in the programme chosen above")),
        ],
        default="invite",
    )
    password_sign_in = BooleanField(_l("Colleagues may also sign in with a password"), default=True)


class ApproveForm(PortalForm):
    """The admin's approval: only the CSRF token."""
