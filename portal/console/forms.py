from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from wtforms import BooleanField, HiddenField, SelectField, StringField, TextAreaField
from wtforms.fields import DateField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import AnyOf, DataRequired, Length, Optional, ValidationError
from wtforms.widgets import TextInput

from portal.console.words import STATUS_WORDS, family_word
from portal.core.i18n import N_
from portal.core.text import strip
from portal.outbox.ground.statuses import ALL
from portal.outbox.operate.operator import ACTIONS, REASON_MAX, SEND_AGAIN, suppression_comparison
from portal.web.forms import EARLIEST_DAY, LATEST_DAY, PortalForm, day_out_of_range

# An action's name, in English (translated where it is shown).
ACTION_LABELS = {
    "retry": N_("Retry"),
    "confirm_sent": N_("Confirm as sent"),
    "send_again": N_("Send again as a new email"),
    "cancel": N_("Cancel"),
}
assert set(ACTION_LABELS) == set(ACTIONS)
# One email's buttons, each saying what it does to that email.
BUTTON_LABELS = {
    "retry": N_("Try sending it again"),
    "confirm_sent": N_("Confirm it was sent"),
    "send_again": N_("Send it again as a new email"),
    "cancel": N_("Cancel this email"),
}
assert set(BUTTON_LABELS) == set(ACTIONS)
CHOOSE_ACTION = _l("Choose one of the actions offered.")
UNKNOWN_CHOICE = _l("Choose one of the values offered.")


DAY_FORMATS = ["%Y-%m-%d", "%d.%m.%Y"]
DAY_INPUT = {"inputmode": "numeric", "placeholder": "31.12.2026", "autocomplete": "off"}


def created_day(form, field) -> None:
    """A day the list can count from: far outside, the day after it overflows the calendar."""
    if field.data and day_out_of_range(field.data):
        raise ValidationError(
            _("Choose a day between %(first)d and %(last)d.", first=EARLIEST_DAY.year, last=LATEST_DAY.year)
        )


def family_choices(none_chosen: str, families) -> list[SelectChoice]:
    """An email family select's choices: `none_chosen` (the empty value) first, then each family."""
    return [SelectChoice("", none_chosen)] + [SelectChoice(name, family_word(name)) for name in families]


def offered_family(field) -> None:
    """A family select takes only a family it offered (or none)."""
    if field.data and field.data not in [choice.value for choice in field.choices]:
        raise ValidationError(UNKNOWN_CHOICE)


class FilterForm(PortalForm):
    """The list's filters, from the query string (a GET changes nothing, so no CSRF token)."""

    class Meta:
        csrf = False

    # An unknown value is refused, never read as "any": an action over the list acts on what it matches.
    status = SelectField(
        _l("Status"),
        choices=[SelectChoice("", _l("Any status"))] + [SelectChoice(s, _l(STATUS_WORDS[s])) for s in ALL],
        validators=[Optional(), AnyOf(["", *ALL], message=UNKNOWN_CHOICE)],
        validate_choice=False,
    )
    family = SelectField(_l("Family"), choices=[SelectChoice("", _l("Any family"))], validate_choice=False)
    q = StringField(_l("Recipient starts with"), filters=[strip], validators=[Length(max=254)])
    # Typed, day first or year first: a browser's date picker writes its own locale's order (US month first).
    created_from = DateField(
        _l("Created from"),
        format=DAY_FORMATS,
        widget=TextInput(),
        render_kw=DAY_INPUT,
        validators=[Optional(), created_day],
    )
    created_to = DateField(
        _l("Created until"),
        format=DAY_FORMATS,
        widget=TextInput(),
        render_kw=DAY_INPUT,
        validators=[Optional(), created_day],
    )

    def __init__(self, *args, families=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.family.choices = family_choices(_("Any family"), families)

    def validate_family(self, field):
        offered_family(field)

    def validate_created_to(self, field):
        if field.data and self.created_from.data and field.data < self.created_from.data:
            raise ValidationError(_("The end date must not be before the start date."))


class ActionForm(PortalForm):
    """One action on one email: the buttons send `action`; the reason is required."""

    action = HiddenField(validators=[DataRequired(CHOOSE_ACTION), AnyOf(list(ACTIONS), message=CHOOSE_ACTION)])
    reason = TextAreaField(
        _l("Reason"),
        filters=[strip],
        validators=[
            DataRequired(_l("Say why: the reason is kept with the action.")),
            # WTForms fills in %(max)d.
            Length(max=REASON_MAX, message=_l("Keep the reason under %(max)d characters.")),
        ],
    )
    message_id = StringField(
        _l("Provider message ID (optional)"), filters=[strip], validators=[Optional(), Length(max=200)]
    )
    confirm_duplicate = BooleanField(_l("I understand that the person may receive this email twice"))

    def validate_confirm_duplicate(self, field):
        if self.action.data == SEND_AGAIN and not field.data:
            raise ValidationError(_("To send it again, confirm that the person may receive it twice."))


class BulkActionForm(ActionForm):
    """The same action over the filtered list, after a page that states how many emails it changes."""

    status = HiddenField()
    family = HiddenField()
    q = HiddenField(filters=[strip])
    created_from = HiddenField()
    created_to = HiddenField()
    expected_count = HiddenField()


class ChooseBulkActionForm(PortalForm):
    """The list's "act on every match" step: which action, before the count is confirmed."""

    action = SelectField(
        _l("Action on the emails that match"),
        choices=[SelectChoice(value, _l(label)) for value, label in ACTION_LABELS.items()],
    )
    status = HiddenField()
    family = HiddenField()
    q = HiddenField(filters=[strip])
    created_from = HiddenField()
    created_to = HiddenField()


class PauseForm(PortalForm):
    """Pause sending, or resume it: `family` empty means all sending; the reason is required."""

    family = SelectField(_l("What to pause"), choices=[], validate_choice=False)
    reason = TextAreaField(
        _l("Reason"),
        filters=[strip],
        validators=[
            DataRequired(_l("Say why: the reason is kept with the action.")),
            Length(max=REASON_MAX, message=_l("Keep the reason under %(max)d characters.")),
        ],
    )

    def __init__(self, *args, families=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.family.choices = family_choices(_("All sending"), families)

    def validate_family(self, field):
        offered_family(field)


class DifferenceForm(PortalForm):
    """An offer of the suppression lists' comparison: the button pressed names it."""

    offer = HiddenField(validators=[DataRequired(), AnyOf(suppression_comparison.ALL_OFFERS, message=CHOOSE_ACTION)])
