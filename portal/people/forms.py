from portal.web.forms import PortalForm


class ConfirmForm(PortalForm):
    """A confirmation step: only the CSRF token."""
