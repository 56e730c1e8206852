"""The report emails page's forms: a manager's choice of frequency, and a test send."""

from __future__ import annotations

from flask_babel import lazy_gettext as _l
from wtforms import RadioField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired

from portal.report_emails.queries import FREQUENCIES
from portal.web.forms import PortalForm, RequestIdField


class SubscriptionForm(PortalForm):
    frequency = RadioField(
        _l("Report emails"),
        # The labels are marked where they are defined (queries.FREQUENCIES), and read in the page's language.
        choices=[SelectChoice(value, _l(label)) for value, label in FREQUENCIES.items()],
        validators=[DataRequired(message=_l("Choose monthly, quarterly or off."))],
    )


class TestSendForm(PortalForm):
    request_id = RequestIdField()  # posting the same page twice (a double click) is one email
