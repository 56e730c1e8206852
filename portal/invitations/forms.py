from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf.file import FileField, FileRequired
from wtforms import HiddenField, PasswordField, RadioField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, ValidationError

from portal.auth import MIN_PASSWORD_LENGTH
from portal.core.programmes import PROGRAMMES
from portal.invitations.addresses import MAX_ADDRESSES, parse_addresses
from portal.web.forms import InvitationForm, PortalForm, language_field


class InviteForm(InvitationForm):
    emails = TextAreaField(
        _l("Email addresses"), validators=[DataRequired(message=_l("Add at least one email address."))]
    )
    programme = RadioField(
        _l("Programme"),
        choices=[SelectChoice(value, label) for value, label in PROGRAMMES.items()],
        validators=[DataRequired(message=_l("Choose a programme."))],
    )
    language = language_field()
    parsed = None

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


class ImportForm(PortalForm):
    """The CSV import's first step: the file and the invitations' programme and language."""

    file = FileField(_l("CSV file of colleagues"), validators=[FileRequired(message=_l("Choose a CSV file."))])
    programme = _programme_field()
    language = language_field()


class ConfirmImportForm(PortalForm):
    """The import's second step, from its preview: the colleagues read from the file, as JSON."""

    colleagues = HiddenField(validators=[DataRequired()])
    programme = _programme_field()
    language = language_field()


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
