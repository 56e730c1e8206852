from wtforms import PasswordField, RadioField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, ValidationError

from portal.auth import MIN_PASSWORD_LENGTH
from portal.core.programmes import PROGRAMMES
from portal.invitations.addresses import MAX_ADDRESSES, parse_addresses
from portal.web.forms import PortalForm


class InviteForm(PortalForm):
    emails = TextAreaField("Email addresses", validators=[DataRequired(message="Add at least one email address.")])
    programme = RadioField(
        "Programme",
        choices=[SelectChoice(value, label) for value, label in PROGRAMMES.items()],
        validators=[DataRequired(message="Choose a programme.")],
    )
    parsed = None

    def validate_emails(self, field):
        self.parsed = parse_addresses(field.data)
        for typed, _why in self.parsed.invalid:
            field.errors.append(f"“{typed}” is not a valid email address.")
        if not self.parsed.valid and not self.parsed.invalid:
            raise ValidationError("Add at least one email address.")
        if len(self.parsed.valid) > MAX_ADDRESSES:
            raise ValidationError(
                f"Invite at most {MAX_ADDRESSES} people at a time (you pasted {len(self.parsed.valid)})."
            )
        if self.parsed.invalid:
            raise ValidationError("Nothing was sent: fix the addresses above and try again.")


class AcceptForm(PortalForm):
    name = StringField("Your name", validators=[DataRequired(message="Tell us your name."), Length(max=120)])
    password = PasswordField(
        "Choose a password",
        validators=[
            DataRequired(),
            Length(min=MIN_PASSWORD_LENGTH, max=1024, message=f"Use at least {MIN_PASSWORD_LENGTH} characters."),
        ],
    )
