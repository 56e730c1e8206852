from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf.file import FileField, FileRequired
from wtforms import HiddenField, PasswordField, RadioField, SelectField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, ValidationError

from portal.auth import MIN_PASSWORD_LENGTH
from portal.core.i18n import LANGUAGES
from portal.core.programmes import PROGRAMMES
from portal.invitations.addresses import MAX_ADDRESSES, parse_addresses
from portal.web.forms import PortalForm
from portal.web.i18n import current_language


class InviteForm(PortalForm):
    emails = TextAreaField(
        _l("Email addresses"), validators=[DataRequired(message=_l("Add at least one email address."))]
    )
    programme = RadioField(
        _l("Programme"),
        choices=[SelectChoice(value, label) for value, label in PROGRAMMES.items()],
        validators=[DataRequired(message=_l("Choose a programme."))],
    )
    # Each language named in itself ("English", "Norsk"); the manager's page language first chosen.
    language = SelectField(
        _l("Language of the invitation email"),
        choices=[SelectChoice(code, name, render_kw={"lang": code}) for code, name in LANGUAGES.items()],
        default=current_language,
    )
    parsed = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Optional in a POST (scripts and older pages post only emails and programme): left out or
        # empty, the email is in the page's language.
        if self.is_submitted() and not any(self.language.raw_data or ()):
            self.language.data = current_language()
            self.language.raw_data = [self.language.data]

    def validate_emails(self, field):
        self.parsed = parse_addresses(field.data)
        for typed, _why in self.parsed.invalid:
            field.errors.append(_("“%(address)s” is not a valid email address.", address=typed))
        if not self.parsed.valid and not self.parsed.invalid:
            raise ValidationError(_("Add at least one email address."))
        if len(self.parsed.valid) > MAX_ADDRESSES:
            raise ValidationError(
                _(
                    "Invite at most %(max)d people at a time (you pasted %(num)d).",
                    max=MAX_ADDRESSES,
                    num=len(self.parsed.valid),
                )
            )
        if self.parsed.invalid:
            raise ValidationError(_("Nothing was sent: fix the addresses above and try again."))


def _programme_field():
    return RadioField(
        _l("Programme"),
        choices=[SelectChoice(value, label) for value, label in PROGRAMMES.items()],
        validators=[DataRequired(message=_l("Choose a programme."))],
    )


def _language_field():
    return SelectField(
        _l("Language of the invitation email"),
        choices=[SelectChoice(code, name, render_kw={"lang": code}) for code, name in LANGUAGES.items()],
        default=current_language,
    )


class ImportForm(PortalForm):
    """The CSV import's first step: the file and the invitations' programme and language."""

    file = FileField(_l("CSV file of colleagues"), validators=[FileRequired(message=_l("Choose a CSV file."))])
    programme = _programme_field()
    language = _language_field()


class ConfirmImportForm(PortalForm):
    """The import's second step, from its preview: the colleagues read from the file, as JSON."""

    colleagues = HiddenField(validators=[DataRequired()])
    programme = _programme_field()
    language = _language_field()


class AcceptForm(PortalForm):
    name = StringField(_l("Your name"), validators=[DataRequired(message=_l("Tell us your name.")), Length(max=120)])
    password = PasswordField(
        _l("Choose a password"),
        validators=[
            DataRequired(),
            Length(
                min=MIN_PASSWORD_LENGTH,
                max=1024,
                message=_l("Use at least %(num)d characters.", num=MIN_PASSWORD_LENGTH),
            ),
        ],
    )
