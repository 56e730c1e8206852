from wtforms import BooleanField, HiddenField, SelectField, StringField, TextAreaField
from wtforms.fields import DateField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import AnyOf, DataRequired, Length, Optional, ValidationError
from wtforms.widgets import TextInput

from portal.core.text import strip
from portal.outbox.operator import ACTIONS, REASON_MAX, SEND_AGAIN
from portal.outbox.statuses import ALL
from portal.web.forms import EARLIEST_DAY, LATEST_DAY, PortalForm, day_out_of_range

ACTION_LABELS = {
    "retry": "Retry",
    "confirm_sent": "Confirm as sent",
    "send_again": "Send again as a new email",
    "cancel": "Cancel",
}
assert set(ACTION_LABELS) == set(ACTIONS)
CHOOSE_ACTION = "Choose one of the actions offered."
UNKNOWN_CHOICE = "Choose one of the values offered."


DAY_FORMATS = ["%Y-%m-%d", "%d.%m.%Y"]
DAY_INPUT = {"inputmode": "numeric", "placeholder": "31.12.2026", "autocomplete": "off"}


def created_day(form, field) -> None:
    """A day the list can count from: far outside, the day after it overflows the calendar."""
    if field.data and day_out_of_range(field.data):
        raise ValidationError(f"Choose a day between {EARLIEST_DAY.year} and {LATEST_DAY.year}.")


class FilterForm(PortalForm):
    """The list's filters, from the query string (a GET changes nothing, so no CSRF token)."""

    class Meta:
        csrf = False

    # An unknown value is refused, never read as "any": an action over the list acts on what it matches.
    status = SelectField(
        "Status",
        choices=[SelectChoice("", "Any status")] + [SelectChoice(s, s.replace("_", " ")) for s in ALL],
        validators=[Optional(), AnyOf(["", *ALL], message=UNKNOWN_CHOICE)],
        validate_choice=False,
    )
    family = SelectField("Family", choices=[SelectChoice("", "Any family")], validate_choice=False)
    q = StringField("Recipient starts with", filters=[strip], validators=[Length(max=254)])
    # Typed, day first or year first: a browser's date picker writes its own locale's order (US month first).
    created_from = DateField(
        "Created from",
        format=DAY_FORMATS,
        widget=TextInput(),
        render_kw=DAY_INPUT,
        validators=[Optional(), created_day],
    )
    created_to = DateField(
        "Created until",
        format=DAY_FORMATS,
        widget=TextInput(),
        render_kw=DAY_INPUT,
        validators=[Optional(), created_day],
    )

    def __init__(self, *args, families=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.family.choices = [SelectChoice("", "Any family")] + [
            SelectChoice(name, name.replace("_", " ")) for name in families
        ]

    def validate_family(self, field):
        if field.data and field.data not in [choice.value for choice in field.choices]:
            raise ValidationError(UNKNOWN_CHOICE)

    def validate_created_to(self, field):
        if field.data and self.created_from.data and field.data < self.created_from.data:
            raise ValidationError("The end date must not be before the start date.")


class ActionForm(PortalForm):
    """One action on one email: the buttons send `action`; the reason is required."""

    action = HiddenField(validators=[DataRequired(CHOOSE_ACTION), AnyOf(list(ACTIONS), message=CHOOSE_ACTION)])
    reason = TextAreaField(
        "Reason",
        filters=[strip],
        validators=[
            DataRequired("Say why: the reason is kept with the action."),
            Length(max=REASON_MAX, message=f"Keep the reason under {REASON_MAX} characters."),
        ],
    )
    message_id = StringField(
        "Provider message ID (optional)", filters=[strip], validators=[Optional(), Length(max=200)]
    )
    confirm_duplicate = BooleanField("I understand that the person may receive this email twice")

    def validate_confirm_duplicate(self, field):
        if self.action.data == SEND_AGAIN and not field.data:
            raise ValidationError("To send it again, confirm that the person may receive it twice.")


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
        "Action on the emails that match",
        choices=[SelectChoice(value, label) for value, label in ACTION_LABELS.items()],
    )
    status = HiddenField()
    family = HiddenField()
    q = HiddenField(filters=[strip])
    created_from = HiddenField()
    created_to = HiddenField()
