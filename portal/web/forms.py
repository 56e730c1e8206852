"""What every form of the portal accepts: text only, without control characters.

Two rules, each in one place:

- No form takes a file, but an import declared with `takes_a_file` (the invitations page's CSV). A
  text field sent as a file upload is refused for every other view by `refuse_file_uploads` (a
  before_request hook) with 400 and a message, before any form sees it.
- `PortalForm` refuses control characters (NUL, escape codes, …) in what people type: the libSQL
  driver cuts text at a NUL when it reads it back, and escape codes would reach email subjects.
  Multi-line fields (TextAreaField) may hold line breaks and tabs; single-line fields hold neither.
  It refuses characters that hide or reorder text (zero-width spaces, direction overrides: core/text.py
  `hidden_characters_in`) the same way, in every field, since what one person types is what another
  reads: names, company names, subjects, messages, notes, the names pasted with addresses.
  Passwords are exempt: they are hashed, never stored or shown as text.
- `PortalForm` holds every choice (select, radio) to the options it offers: an unknown value, or an
  empty one where no empty option is offered (or the field is required), is a field error on that
  field, whatever the field's own `validate_choice`; so no operation ever sees a choice it did not offer.
"""

from __future__ import annotations

import uuid
from datetime import date

from flask import current_app, request
from flask_babel import LazyString
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from jinja2 import pass_context
from markupsafe import escape
from werkzeug.exceptions import BadRequest
from wtforms import EmailField, HiddenField, PasswordField, SelectField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice, SelectFieldBase
from wtforms.validators import DataRequired, Email, InputRequired, Length, Regexp

from portal.core.i18n import LANGUAGES, N_, number
from portal.core.text import control_characters_in, hidden_characters_in
from portal.web.i18n import current_language

# In English here (tests compare with them); a page shows each in its own language (`_()` where used).
FILES_REFUSED = N_("This form takes text only, not files. Go back and type your answers into the form.")
CONTROL_CHARACTERS = N_("Remove the invisible control characters from this answer; they cannot be stored.")
LINE_BREAKS = N_("Keep this answer on one line.")
HIDDEN_CHARACTERS = N_(
    "Remove the invisible characters from this answer (zero-width spaces, marks that change the "
    "text's direction): they would hide or reorder what others read."
)
CHOOSE_OFFERED = N_("Choose one of the options offered.")
# WTForms' own words for an unknown choice, replaced by CHOOSE_OFFERED (or the field's own message);
# WTForms words them in the page's language too (`_wtforms_choice_messages`).
_WTFORMS_CHOICE_MESSAGES = {"Not a valid choice.", "Not a valid choice", "Invalid Choice: could not coerce."}


class LazyText(LazyString):
    """A message translated when shown, HTML-escaped like any other text (Flask-Babel's lazy
    strings pass into a page unescaped: "company's" would lose its &#39;)."""

    def __html__(self):
        return escape(str(self))


def lazy_text(message: str, **values) -> LazyText:
    """lazy_gettext, escaped as text."""
    return LazyText(_, message, **values)


def too_long_text(message: str, limit: int) -> LazyText:
    """A "keep it under %(max)s characters" message, its limit as the page's language writes it
    (2,000 / 2 000) when the message is shown."""
    from portal.web.i18n import current_language

    return LazyText(lambda: _(message, max=number(limit, current_language())))


def form_has_errors(form: FlaskForm) -> bool:
    """Whether the form, as validated, refused something: a field's error or the whole form's."""
    return bool(form.form_errors) or any(field.errors for field in form)


@pass_context
def page_has_errors(context) -> bool:
    """For base.html's title ("Error: …", as GOV.UK's design system prefixes a page whose form was
    refused): a form among the page's values has errors, or the page lists its own `errors` (the
    report's query)."""
    values = context.get_all().values()
    if any(isinstance(value, FlaskForm) and form_has_errors(value) for value in values):
        return True
    errors = context.get("errors")
    return isinstance(errors, list | tuple) and bool(errors)


def error_message(error: Exception) -> str:
    """An operation's refusal (an InputError) in the page's language: its catalogue message and
    values when it carries them (`message`, `values`), else its English text looked up as it is."""
    message = getattr(error, "message", None)
    if isinstance(message, str):
        return _(message, **(getattr(error, "values", None) or {}))
    return _(str(error))


class PortalForm(FlaskForm):
    """The base of every form in the portal (a structural test holds every form to it)."""

    def validate(self, extra_validators=None) -> bool:
        valid = super().validate(extra_validators)
        for field in self:
            if isinstance(field, PasswordField) or field.name == "csrf_token":
                continue
            message = _control_character_problem(field)
            if message:
                field.errors = [message, *field.errors]
                valid = False
            if isinstance(field, SelectFieldBase) and _choice_problem(field):
                valid = False
        return valid


# The days a date field may name: far outside, date arithmetic (a day or a month on, a local
# midnight in UTC) overflows the calendar. The portal's data begins well after the first.
EARLIEST_DAY, LATEST_DAY = date(2000, 1, 1), date(2100, 12, 31)


def day_out_of_range(day: date) -> bool:
    return not EARLIEST_DAY <= day <= LATEST_DAY


def _fresh_if_missing(value: str | None = None) -> str:
    return value or uuid.uuid4().hex


class RequestIdField(HiddenField):
    """A new ID with every page, so posting the same page twice (a double click) acts once.

    A post that carries none, as CONTRACT.md lists only the CSRF token for the routes using it (a
    script following the contract sends no more), gets a fresh ID: each such post is a new request.
    """

    def __init__(self, label=None, **kwargs):
        super().__init__(
            label,
            default=_fresh_if_missing,
            filters=[_fresh_if_missing],
            validators=[Regexp(r"^[0-9a-f]{32}$")],
            **kwargs,
        )


def _control_character_problem(field) -> str | None:
    multi_line = isinstance(field, TextAreaField)
    for raw in field.raw_data or ():
        if not isinstance(raw, str):
            continue
        found = control_characters_in(raw, allowed="\n\r\t" if multi_line else "")
        if found:
            return _(LINE_BREAKS) if found <= set("\n\r\t") else _(CONTROL_CHARACTERS)
        if hidden_characters_in(raw):
            return _(HIDDEN_CHARACTERS)
    return None


def _offered_values(field) -> set[str]:
    choices = field.choices or []
    if isinstance(choices, dict):  # option groups
        choices = [choice for group in choices.values() for choice in group]
    values = set()
    for choice in choices:
        if hasattr(choice, "value"):
            values.add(str(choice.value))
        elif isinstance(choice, tuple | list):
            values.add(str(choice[0]))
        else:
            values.add(str(choice))
    return values


def _required_message(field) -> str | None:
    for validator in field.validators:
        if isinstance(validator, DataRequired | InputRequired):
            return validator.message or _(CHOOSE_OFFERED)
    return None


def _wtforms_choice_messages(field) -> set[str]:
    return _WTFORMS_CHOICE_MESSAGES | {field.gettext(message) for message in _WTFORMS_CHOICE_MESSAGES}


def _choice_problem(field) -> bool:
    """Sets the field's one error if its posted value is not among the options offered; True if so."""
    posted = [raw for raw in (field.raw_data or ()) if raw != ""]
    offered = _offered_values(field)
    wtforms_words = _wtforms_choice_messages(field)
    own = [message for message in field.errors if message not in wtforms_words]
    if any(not isinstance(raw, str) or raw not in offered for raw in posted):
        field.errors = own or [_(CHOOSE_OFFERED)]
        return True
    required = _required_message(field)
    if not posted and ("" not in offered or required):
        field.errors = own or [required or _(CHOOSE_OFFERED)]
        return True
    return bool(field.errors)


def language_field() -> SelectField:
    """The language of an invitation email, each language named in itself ("English", "Norsk"), the
    page's language first chosen: the Invite page's field and the Add a manager form's."""
    return SelectField(
        _l("Language of the invitation email"),
        choices=[SelectChoice(code, name, render_kw={"lang": code}) for code, name in LANGUAGES.items()],
        default=current_language,
    )


class InvitationForm(PortalForm):
    """A form that sends an invitation email, in the language chosen on it."""

    language = language_field()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Optional in a POST (scripts and older pages post without it): left out, the email is in the
        # page's language. Sent empty, it is a choice not offered (a field error, as for any select).
        if self.is_submitted() and not self.language.raw_data:
            self.language.data = current_language()
            self.language.raw_data = [self.language.data]


class InviteManagerForm(InvitationForm):
    """A company's new manager, by address, with their name and the email's language as the Invite
    page asks them: a manager adds one on the people page, an admin on the company's page (the same
    invitation either way)."""

    email = EmailField(
        _l("Email address"),
        validators=[DataRequired(message=_l("Enter the new manager's email address.")), Email(), Length(max=254)],
    )
    name = StringField(
        _l("Their name (optional)"),
        description=_l("The email greets them by it; they can change it when they accept."),
        validators=[Length(max=120)],
        filters=[lambda value: value.strip() if isinstance(value, str) else value],
    )
    language = language_field()


class ConfirmedForm(PortalForm):
    """A step that cannot be taken back (closing a year): it acts only when its confirmation page's
    "Yes" posts `confirmed=yes`. Any other post is answered with that page and changes nothing, as
    `POST /admin/campaigns/<id>/send` without `confirm_reach` is (CONTRACT.md)."""

    confirmed = HiddenField()

    @property
    def is_confirmed(self) -> bool:
        return self.confirmed.data == "yes"


class ContractConfirmedForm(ConfirmedForm):
    """A final step whose plain POST is in CONTRACT.md with no confirmation field (revoking an
    invitation, cancelling a campaign): the pages reach it only through its confirmation page (the
    list links there), and a script's POST that leaves the field out acts, as the contract promises.
    A post that carries the field acts only when it says yes."""

    @property
    def is_confirmed(self) -> bool:
        return not self.confirmed.raw_data or self.confirmed.data == "yes"


class FilesRefused(BadRequest):
    description = _l(FILES_REFUSED)
    show_description = True  # the error page shows this message instead of the generic one


def takes_a_file(view):
    """Declares the one kind of view that takes a file: an import (the invitations page's CSV of colleagues)."""
    view.takes_a_file = True
    return view


def refuse_file_uploads():
    """before_request hook: no view takes a file, except those declared with `takes_a_file`, so a
    request carrying one elsewhere is answered 400."""
    if request.mimetype == "multipart/form-data" and request.files:
        view = current_app.view_functions.get(request.endpoint or "")
        if not getattr(view, "takes_a_file", False):
            raise FilesRefused()
