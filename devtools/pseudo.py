"""A pseudo-translation of the portal for tests: English with every message 40% longer.

Languages run longer than English (Norwegian and German by a fifth to a third, some by more). A
test app made by `create_pseudo_app()` answers every English page with each message of the
catalogue accented and padded to 140% of its length, so a page that would clip or overflow in a
longer language does so here, without waiting for a translation (e2e/test_pseudo_translation.py).
Placeholders (%(name)s, %d), markup and entities stay as they are, so every message still formats.
Test-only: nothing in `portal/` imports this.

    gunicorn -c gunicorn.conf.py 'devtools.pseudo:create_pseudo_app()'
"""

from __future__ import annotations

import math
import re

from babel.support import NullTranslations

from portal import create_app
from portal.core import i18n
from portal.core.i18n import ENGLISH

GROWTH = 0.4
_ACCENTED = str.maketrans("aceinorsuyzACEINORSUYZ", "åçéîñøŕšüýžÅÇÉÎÑØŔŠÜÝŽ")
# What must come through unchanged: placeholders, tags, entities.
_KEPT = re.compile(r"(%\([^)]*\)[-#0 +]*\d*(?:\.\d+)?[sdfr]|%[sdf%]|<[^>]*>|&#?\w+;)")
_FILLER = "ŀőŕéɱ ïƥšüɱ ðőŀőŕ šïţ åɱéţ çőñšéçţéţüŕ "


def pseudo(message: str) -> str:
    """`message` accented, plus filler words making it 40% longer (at least one character)."""
    if not message or not message.strip():
        return message
    parts = _KEPT.split(message)
    accented = "".join(part if index % 2 else part.translate(_ACCENTED) for index, part in enumerate(parts))
    extra = max(1, math.ceil(len(message) * GROWTH))
    filler = (_FILLER * (extra // len(_FILLER) + 1))[:extra].strip() or "ŀ"
    return f"{accented} {filler}"


class PseudoTranslations(NullTranslations):
    """Every lookup of the catalogue, pseudo-translated (flask-babel calls the u- names)."""

    def gettext(self, message):
        return pseudo(message)

    def ngettext(self, singular, plural, n):
        return pseudo(singular if n == 1 else plural)

    def pgettext(self, context, message):
        return pseudo(message)

    def npgettext(self, context, singular, plural, n):
        return pseudo(singular if n == 1 else plural)

    ugettext, ungettext, upgettext, unpgettext = gettext, ngettext, pgettext, npgettext


def create_pseudo_app(config=None):
    """The portal, its English pseudo-translated: flask-babel's cache of catalogues holds the
    pseudo-translation for English, so pages never load the real one; and the catalogue that code
    without a request reads (portal/core/i18n.py `translations`: period names, labels, emails, PDFs)
    answers English with it too."""
    real = i18n.translations
    i18n.translations = lambda language: PseudoTranslations() if language == ENGLISH else real(language)
    app = create_app(config)
    with app.app_context():  # the domain (a cached property) reads the app's Babel settings
        domain = app.extensions["babel"].instance.domain_instance
        domain.cache[(ENGLISH, domain.domain[0])] = PseudoTranslations()
    return app
