"""What the public forms (apply, demo) do alike: a honeypot, per-client limits, and a clear answer
when the database is busy or a commit cannot be confirmed."""

from __future__ import annotations

import logging
from collections.abc import Callable

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from wtforms import EmailField, StringField
from wtforms.validators import DataRequired, Email, Length

from portal.core.db import AmbiguousCommitError, DatabaseBusyError
from portal.core.i18n import N_
from portal.core.text import InputError, strip
from portal.web.extensions import limiter
from portal.web.forms import PortalForm, error_message

log = logging.getLogger(__name__)

# Per client: five accepted submissions an hour, and a ceiling on all attempts (typos included).
ACCEPTED_LIMIT = "5 per hour"
ATTEMPT_LIMIT = "30 per hour"
BUSY = N_("We are very busy right now and nothing was saved. Please send the form again in a moment.")


class PublicForm(PortalForm):
    # Hidden from people; bots fill it in. A filled-in form is answered as accepted and dropped.
    website = StringField(_l("Leave this field empty"), filters=[strip])


def work_email_field(limit: int) -> EmailField:
    """The work address every public form asks for, with the same messages."""
    return EmailField(
        _l("Work email"),
        filters=[strip],
        validators=[
            DataRequired(_l("Enter your work email address.")),
            Email(_l("Enter an email address like name@company.com.")),
            Length(max=limit),
        ],
    )


def _accepted(response) -> bool:
    return response.status_code == 302


def public_form_limits(scope: str):
    """Decorator for a public form's view: the two per-client limits, named after the form."""

    def decorate(view):
        view = limiter.limit(ATTEMPT_LIMIT, methods=["POST"], scope=f"{scope}-attempts")(view)
        return limiter.limit(ACCEPTED_LIMIT, methods=["POST"], deduct_when=_accepted, scope=f"{scope}-accepted")(view)

    return decorate


def accept_public_form(form: PublicForm, submit: Callable[[], object], *, unconfirmed: str) -> bool:
    """Validate and submit; True when the visitor may be thanked (saved, or a bot caught).

    Otherwise the form carries the reason and the caller renders it again. `unconfirmed` is the
    caller's message, marked with N_ (shown in the page's language; one already translated stays as it is).
    """
    if form.is_submitted() and form.website.data:
        log.info("%s: honeypot filled in; answered as accepted, nothing written", type(form).__name__)
        return True
    if not form.validate_on_submit():
        return False
    try:
        submit()
    except DatabaseBusyError:
        form.form_errors.append(_(BUSY))
    except AmbiguousCommitError:
        form.form_errors.append(_(unconfirmed))
    except InputError as error:
        form.form_errors.append(error_message(error))
    else:
        return True
    return False
