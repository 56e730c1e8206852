from flask_babel import lazy_gettext as _l
from wtforms import EmailField, HiddenField, StringField
from wtforms.validators import DataRequired, Email, Length

from portal.core.text import strip
from portal.web.forms import PortalForm

REASON_MAX = 200


class SearchForm(PortalForm):
    class Meta:
        csrf = False  # a GET search changes nothing

    q = StringField(_l("Search addresses"), filters=[strip], validators=[Length(max=254)])


class AddSuppressionForm(PortalForm):
    email = EmailField(_l("Email address"), filters=[strip], validators=[DataRequired(), Email(), Length(max=254)])
    reason = StringField(_l("Reason"), filters=[strip], validators=[DataRequired(), Length(max=REASON_MAX)])


class RemoveSuppressionForm(PortalForm):
    email = HiddenField(_l("Email address"), filters=[strip], validators=[DataRequired(), Email(), Length(max=254)])
    reason = StringField(
        _l("Reason for removing"), filters=[strip], validators=[DataRequired(), Length(max=REASON_MAX)]
    )
