"""What every form of the portal accepts: text only, without control characters.

Two rules, each in one place:

- No form takes a file. A text field sent as a file upload is refused for every view by
  `refuse_file_uploads` (a before_request hook) with 400 and a message, before any form sees it.
- `PortalForm` refuses control characters (NUL, escape codes, …) in what people type: the libSQL
  driver cuts text at a NUL when it reads it back, and escape codes would reach email subjects.
  Multi-line fields (TextAreaField) may hold line breaks and tabs; single-line fields hold neither.
  Passwords are exempt: they are hashed, never stored or shown as text.
"""

from __future__ import annotations

import uuid
from datetime import date

from flask import request
from flask_wtf import FlaskForm
from werkzeug.exceptions import BadRequest
from wtforms import EmailField, HiddenField, PasswordField, TextAreaField
from wtforms.validators import DataRequired, Email, Length, Regexp

from portal.core.text import control_characters_in

FILES_REFUSED = "This form takes text only, not files. Go back and type your answers into the form."
CONTROL_CHARACTERS = "Remove the invisible control characters from this answer; they cannot be stored."
LINE_BREAKS = "Keep this answer on one line."


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
            return LINE_BREAKS if found <= set("\n\r\t") else CONTROL_CHARACTERS
    return None


class InviteManagerForm(PortalForm):
    """A company's new manager, by address: a manager adds one on the people page, an admin on the
    company's page (the same invitation either way)."""

    email = EmailField(
        "Email address",
        validators=[DataRequired(message="Enter the new manager's email address."), Email(), Length(max=254)],
    )


class FilesRefused(BadRequest):
    description = FILES_REFUSED
    show_description = True  # the error page shows this message instead of the generic one


def refuse_file_uploads():
    """before_request hook: no view takes a file, so a request carrying one is answered 400."""
    if request.mimetype == "multipart/form-data" and request.files:
        raise FilesRefused()
