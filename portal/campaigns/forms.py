from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from wtforms import BooleanField, HiddenField, SelectField, SelectMultipleField, StringField, TextAreaField
from wtforms.validators import AnyOf, DataRequired, Length, Optional, Regexp, ValidationError

from portal.campaigns import versions
from portal.campaigns.audiences import NOT_ON_THE_LIST
from portal.campaigns.markdown import MAX_BODY_BYTES
from portal.campaigns.operations import (
    BODY_TOO_LONG,
    MAX_NAME,
    MAX_SUBJECT,
    NORWEGIAN_BODY_MISSING,
    NORWEGIAN_BODY_TOO_LONG,
    NORWEGIAN_SUBJECT_MISSING,
)
from portal.campaigns.topics import NOT_A_TOPIC, PROGRAMME_NEWS
from portal.core.text import strip
from portal.web.forms import ContractConfirmedForm, PortalForm, RequestIdField

CHOOSE_AUDIENCE = _l("Choose an audience.")


def _blank(value) -> bool:
    return not (value or "").strip()


class OptionalSelectField(SelectField):
    """A select a post may leave out (a script following CONTRACT.md's older list of fields): then
    it is its default, as if that option were chosen. A value posted is checked as any select's."""

    def process_formdata(self, valuelist):
        if not valuelist:
            self.raw_data = valuelist = [self.default]
        super().process_formdata(valuelist)


class ComposeForm(PortalForm):
    """A new campaign, or a draft edited: the same fields either way. The Norwegian version is
    optional: its subject and body, or neither."""

    name = StringField(
        _l("Name (for admins only)"),
        filters=[strip],
        validators=[DataRequired(message=_l("Give the campaign a name.")), Length(max=MAX_NAME)],
    )
    subject = StringField(
        _l("Subject"),
        filters=[strip],
        validators=[DataRequired(message=_l("Write a subject.")), Length(max=MAX_SUBJECT)],
    )
    # Optional in a post (CONTRACT.md's older forms): without it, programme news.
    topic = OptionalSelectField(_l("Topic"), validate_choice=False, default=PROGRAMME_NEWS)
    # The first option is an empty "Choose an audience": required, so choosing nothing is a field error.
    audience = SelectField(_l("Audience"), validate_choice=False, validators=[DataRequired(message=CHOOSE_AUDIENCE)])
    # In the page's order, so the error summary lists the fields as the page shows them.
    body = TextAreaField(_l("Body (Markdown)"), validators=[DataRequired(message=_l("Write the body of the email."))])
    # The Norwegian version's fields, named in the page's language like the others (issue 47, item 8);
    # their inputs say `lang="nb"`, the language written in them. Not Optional(): an empty subject
    # with a body written is the error validate_subject_nb names.
    subject_nb = StringField(_l("Norwegian subject"), filters=[strip], validators=[Length(max=MAX_SUBJECT)])
    body_nb = TextAreaField(_l("Norwegian body (Markdown)"))

    def validate_body(self, field):
        if len((field.data or "").encode("utf-8")) > MAX_BODY_BYTES:
            raise ValidationError(_(BODY_TOO_LONG, kb=MAX_BODY_BYTES // 1024))

    def validate_audience(self, field):
        if field.data not in {value for value, _label in field.choices}:
            raise ValidationError(_(NOT_ON_THE_LIST))

    def validate_topic(self, field):
        if field.data not in {value for value, _label in field.choices}:
            raise ValidationError(_(NOT_A_TOPIC))

    def validate_subject_nb(self, field):
        if _blank(field.data) and not _blank(self.body_nb.data):
            raise ValidationError(_(NORWEGIAN_SUBJECT_MISSING))

    def validate_body_nb(self, field):
        if _blank(field.data) and not _blank(self.subject_nb.data):
            raise ValidationError(_(NORWEGIAN_BODY_MISSING))
        if len((field.data or "").encode("utf-8")) > MAX_BODY_BYTES:
            raise ValidationError(_(NORWEGIAN_BODY_TOO_LONG, kb=MAX_BODY_BYTES // 1024))


class TestSendForm(PortalForm):
    request_id = RequestIdField()  # posting the same page twice (a double click) is one email
    # Which version to send (the button pressed); none: the English one, as CONTRACT.md's token-only post.
    language = StringField(validators=[Optional(), AnyOf(versions.LANGUAGES)])


class SendForm(PortalForm):
    """Send now or at a time. Without `confirm_reach` it only asks: the confirmation page states how
    many people it reaches and posts that number back, so a send never reaches more than was shown."""

    send_at = StringField(_l("Send at (optional)"), filters=[strip], validators=[Optional(), Length(max=40)])
    confirm_reach = HiddenField(
        filters=[strip],
        validators=[Optional(), Regexp(r"^[0-9]{1,9}$", message=_l("Reload the page and try again."))],
    )


class CancelForm(ContractConfirmedForm):
    """Cancel or discard: the page asks first; a script's POST without `confirmed` acts (CONTRACT.md)."""


class DuplicateForm(PortalForm):
    pass


class PreferencesForm(PortalForm):
    """The preference page: a switch per topic (`topics`: the codes the person still wants) and
    `no_campaigns`. The topics are checked against the list in the operation, in its write."""

    topics = SelectMultipleField(validate_choice=False)
    no_campaigns = BooleanField(_l("No campaigns at all"))
