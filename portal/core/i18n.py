"""The portal's two languages, English and Norwegian Bokmål: catalogues, the choice, and numbers and
dates as each language writes them. No Flask here: the worker renders emails and PDFs with it.

Messages are gettext catalogues under `translations/` (extracted with pybabel: `make
translations`), English being the messages themselves. A page's language is chosen per request
(portal/web/i18n.py); an email's when it is written, and stored with its input, so every retry
renders it in the same language. Numbers, dates and money go through Babel's formatters:
"1 234,5" and "7,25" in Norwegian, "1,234.5" and "7.25" in English.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, tzinfo
from decimal import Decimal
from functools import lru_cache

from babel import Locale, dates, numbers
from babel.support import NullTranslations, Translations

from portal.core.resources import TRANSLATIONS_DIR

ENGLISH, NORWEGIAN = "en", "nb"
LANGUAGES = {ENGLISH: "English", NORWEGIAN: "Norsk"}
DEFAULT_LANGUAGE = ENGLISH
# Browsers name Norwegian three ways; the portal writes Bokmål for all of them.
_ALIASES = {"nb": NORWEGIAN, "no": NORWEGIAN, "nn": NORWEGIAN, "en": ENGLISH}


def language_or_default(value: str | None) -> str:
    return value if value in LANGUAGES else DEFAULT_LANGUAGE


def language_of(data: dict) -> str:
    """The language an email's stored input was written in (English for rows from before languages)."""
    return language_or_default(data.get("language"))


def from_accept_language(tags: Iterable[str]) -> str | None:
    """The first of the browser's languages (best first) the portal writes, or None."""
    for tag in tags:
        primary = tag.replace("_", "-").split("-")[0].lower()
        if primary in _ALIASES:
            return _ALIASES[primary]
    return None


def choose_language(chosen: str | None, browser: Iterable[str] = (), company: str | None = None) -> str:
    """A person's own choice; else their browser's; else their company's; else English."""
    for candidate in (chosen, from_accept_language(browser), company):
        if candidate in LANGUAGES:
            return candidate
    return DEFAULT_LANGUAGE


@lru_cache(maxsize=len(LANGUAGES))
def translations(language: str) -> NullTranslations:
    """The compiled catalogue of `language` (English: the messages as written)."""
    if language == ENGLISH or language not in LANGUAGES:
        return NullTranslations()
    return Translations.load(str(TRANSLATIONS_DIR), [language])


def N_(message: str) -> str:
    """Marks a message for the catalogue where it is written; it is translated where it is shown."""
    return message


def translate(language: str, message: str, **values) -> str:
    """`message` in `language`, with its %(name)s placeholders filled (code without a request:
    emails, PDFs, exports; pages use Flask-Babel's `_`)."""
    text = translations(language).ugettext(message)
    return text % values if values else text


def translate_plural(language: str, singular: str, plural: str, count: int, **values) -> str:
    text = translations(language).ungettext(singular, plural, count)
    return text % {"num": count, **values}


# --- numbers, money and dates as the language writes them -------------------------------------------


def number(value: float | Decimal | int, language: str, digits: int | None = None) -> str:
    """`digits` fixed decimals (None: as many as the value has)."""
    pattern = None if digits is None else "#,##0" + ("." + "0" * digits if digits else "")
    return numbers.format_decimal(value, format=pattern, locale=_locale(language))


def signed_number(value: float | Decimal | int, language: str, digits: int) -> str:
    text = number(abs(value), language, digits)
    return ("+" if value >= 0 else "−") + text


def money(value: float | Decimal, currency: str, language: str) -> str:
    return numbers.format_currency(value, currency, locale=_locale(language))


def percent(value: float | Decimal, language: str, digits: int = 1) -> str:
    """`value` in percent points, `digits` decimals: "12,5 %" in Norwegian, "12.5%" in English."""
    pattern = _locale(language).percent_formats[None].pattern
    at = pattern.rfind("0")
    if digits:
        pattern = pattern[: at + 1] + "." + "0" * digits + pattern[at + 1 :]
    return numbers.format_percent(Decimal(str(value)) / 100, format=pattern, locale=_locale(language))


def day(value: date, language: str) -> str:
    """3 Oct 2026 / 3. okt. 2026: the one date format of every page, PDF and email."""
    pattern = "d MMM y" if language_or_default(language) == ENGLISH else "d. MMM y"
    return dates.format_date(value, format=pattern, locale=_locale(language))


def weekday_and_day(value: date, language: str) -> str:
    """Sat 5 Dec 2026 / lør. 5. des. 2026."""
    return dates.format_date(
        value, format="EEE d MMM y" if language == ENGLISH else "EEE d. MMM y", locale=_locale(language)
    )


def moment(value: datetime, zone: tzinfo, language: str) -> str:
    """A time in `zone`, with the zone named: 3 Oct 2026, 16:05 CEST / 3. okt. 2026, 16:05 CEST."""
    local = value.astimezone(zone)
    return f"{day(local.date(), language)}, {local:%H:%M} {local.tzname()}"


def month(value: date, language: str) -> str:
    """Oct 2026 / okt. 2026."""
    return dates.format_date(value, format="MMM y", locale=_locale(language))


@lru_cache(maxsize=len(LANGUAGES))
def _locale(language: str) -> Locale:
    return Locale.parse(language_or_default(language))
