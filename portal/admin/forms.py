from wtforms import EmailField
from wtforms.validators import DataRequired, Email, Length

from portal.web.forms import PortalForm


class InviteManagerForm(PortalForm):
    """An admin invites a company's manager from the company page."""

    email = EmailField(
        "Email address",
        validators=[DataRequired(message="Enter the new manager's email address."), Email(), Length(max=254)],
    )
