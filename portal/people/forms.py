from wtforms import EmailField
from wtforms.validators import DataRequired, Email, Length

from portal.web.forms import PortalForm


class InviteManagerForm(PortalForm):
    email = EmailField(
        "Email address",
        validators=[DataRequired(message="Enter the new manager's email address."), Email(), Length(max=254)],
    )


class ConfirmForm(PortalForm):
    """A confirmation step: only the CSRF token."""
