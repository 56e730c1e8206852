"""Email bodies from templates/emails/, rendered without Flask so the worker can use them.

Every email shares templates/emails/_layout.html; LAYOUT_VERSION is recorded on each outbox row
so a person can tell which layout an email was first rendered with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from portal.core.i18n import LANGUAGES, day, language_or_default, money, number, translations
from portal.core.resources import TEMPLATES_DIR

LAYOUT_VERSION = 1
EMAIL_TEMPLATES = TEMPLATES_DIR / "emails"


@dataclass(frozen=True)
class Attachment:
    filename: str
    content_b64: str
    content_type: str


@dataclass(frozen=True)
class RenderedEmail:
    """The message fields handed to the provider wrapper, and what gets frozen."""

    from_address: str
    subject: str
    html: str
    text: str
    tags: tuple[tuple[str, str], ...] = ()
    reply_to: str | None = None
    attachments: tuple[Attachment, ...] = field(default=())
    # Extra message headers (a campaign's List-Unsubscribe); frozen with the rest.
    headers: tuple[tuple[str, str], ...] = ()


@lru_cache(maxsize=len(LANGUAGES))
def _environment(language: str) -> Environment:
    """One environment per language: its catalogue is installed in it, so two emails in two
    languages rendered at once by two threads never see each other's."""
    env = Environment(
        loader=FileSystemLoader(str(EMAIL_TEMPLATES)),
        autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    env.install_gettext_translations(translations(language), newstyle=True)
    env.globals["language"] = language
    env.filters["number"] = lambda value, digits=None: number(value, language, digits)
    env.filters["money"] = lambda value, currency: money(value, currency, language)
    env.filters["day"] = lambda value: day(value, language)
    return env


def render_bodies(template: str, context: dict) -> tuple[str, str]:
    """(html, text) for templates/emails/<template>.html and .txt, in the language the email was
    written in (its input's `language`, stored with the row: every retry renders the same)."""
    env = _environment(language_or_default(context.get("language")))
    context = {**context, "layout_version": LAYOUT_VERSION}
    html = env.get_template(f"{template}.html").render(context)
    text = env.get_template(f"{template}.txt").render(context)
    return html, text.strip() + "\n"
