"""Each page in its reader's language (Flask-Babel), and the filters that write numbers and dates
in it.

Who reads which language: a signed-in person's own choice (their account page, or the switch in
the header); else, the language the switch stored in a cookie; else the browser's
(Accept-Language); else, for a signed-in person, their company's; else English
(portal/core/i18n.py, `choose_language`).
"""

from __future__ import annotations

from flask import Flask, request
from flask_babel import Babel, get_locale, gettext
from flask_login import current_user

from portal.core import i18n
from portal.core.clock import parse
from portal.core.periods import report_timezone
from portal.core.pseudonyms import ERASED_NAME
from portal.core.resources import TRANSLATIONS_DIR

LANGUAGE_COOKIE = "language"


def current_language() -> str:
    """The language of this request's page."""
    return i18n.language_or_default(str(get_locale()))


def _select_language() -> str:
    user = current_user if current_user and current_user.is_authenticated else None
    chosen = getattr(user, "language", None) or request.cookies.get(LANGUAGE_COOKIE)
    browser = [tag for tag, _quality in request.accept_languages]
    return i18n.choose_language(chosen, browser, getattr(user, "company_language", None))


def init_i18n(app: Flask, settings) -> None:
    Babel(app, locale_selector=_select_language, default_translation_directories=str(TRANSLATIONS_DIR))
    zone = report_timezone(settings)
    app.jinja_env.globals["languages"] = i18n.LANGUAGES
    app.jinja_env.globals["current_language"] = current_language
    filters = app.jinja_env.filters
    filters["number"] = lambda value, digits=None: i18n.number(value, current_language(), digits)
    filters["signed"] = lambda value, digits=0: i18n.signed_number(value, current_language(), digits)
    filters["money"] = lambda value, currency: i18n.money(value, currency, current_language())
    filters["percent"] = lambda value, digits=1: i18n.percent(value, current_language(), digits)
    # Every time a person reads is in the portal's zone, named: "3 Oct 2026" and "3 Oct 2026, 16:05 CEST".
    filters["date_only"] = lambda value: _stored(
        value, lambda moment: i18n.day(moment.astimezone(zone).date(), current_language())
    )
    filters["date_time"] = lambda value: _stored(value, lambda moment: i18n.moment(moment, zone, current_language()))
    # A local day (a date, not a stored time): "Sat 5 Dec 2026".
    filters["format_day"] = lambda value: i18n.weekday_and_day(value, current_language())
    filters["day"] = lambda value: i18n.day(value, current_language())
    # A person's name as stored; an erased person's stand-in ("Former volunteer") in the page's language.
    filters["person_name"] = lambda name: gettext(ERASED_NAME) if name == ERASED_NAME else name


def _stored(value: str, show) -> str:
    """A stored UTC timestamp shown by `show`; anything else as it is, rather than failing the page."""
    try:
        return show(parse(value))
    except (ValueError, TypeError):
        return value
