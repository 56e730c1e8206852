"""English and Norwegian: the catalogue is whole, every text a template shows is marked for it, and
each reader gets their language (their choice, their browser's, their company's, then English),
with numbers and dates written the way that language writes them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po
from jinja2 import Environment

from portal.core import i18n
from portal.core.resources import TEMPLATES_DIR, TRANSLATIONS_DIR
from tests.pages import csrf_from

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = TRANSLATIONS_DIR / "nb" / "LC_MESSAGES" / "messages.po"
COMPILED = CATALOGUE.with_suffix(".mo")
# As `make translations` extracts (Makefile): Babel's own keywords and the portal's.
KEYWORDS = {
    "_": None,
    "gettext": None,
    "ngettext": (1, 2),
    "N_": None,
    "_l": None,
    "lazy_gettext": None,
    "translate": (2,),
    "translate_plural": (2, 3),
}
METHODS = [("portal/**.py", "python"), ("templates/**.html", "jinja2"), ("templates/**.txt", "jinja2")]


def catalogue():
    with CATALOGUE.open("rb") as file:
        return read_po(file, locale="nb")


def message_ids(messages) -> set[str]:
    return {message.id if isinstance(message.id, str) else message.id[0] for message in messages if message.id}


def test_every_message_has_a_norwegian_translation_that_is_not_fuzzy():
    untranslated = [
        m.id for m in catalogue() if m.id and not all(m.string if isinstance(m.string, tuple) else [m.string])
    ]
    fuzzy = [m.id for m in catalogue() if m.id and m.fuzzy]
    assert untranslated == [], f"{len(untranslated)} messages without Norwegian: {untranslated[:10]}"
    assert fuzzy == [], f"fuzzy translations (check, then clear the flag): {fuzzy[:10]}"


def test_the_compiled_catalogue_is_the_catalogue():
    """The portal reads the .mo: `make translations` compiles it from the .po."""

    def pairs(messages):
        return {
            (m.id if isinstance(m.id, str) else tuple(m.id)): (
                m.string if isinstance(m.string, str) else tuple(m.string)
            )
            for m in messages
            if m.id
        }

    with COMPILED.open("rb") as file:
        compiled = pairs(read_mo(file))
    written = pairs(catalogue())
    assert compiled == written, "run `make translations`: the compiled catalogue is out of date"


def test_the_catalogue_holds_exactly_the_messages_the_code_and_templates_mark():
    extracted = set()
    for pattern, method in METHODS:
        top = pattern.split("/")[0]
        for _file, _line, message, _comments, _context in extract_from_dir(
            ROOT / top, [(pattern.split("/", 1)[1], method)], keywords=KEYWORDS
        ):
            extracted.add(message if isinstance(message, str) else message[0])
    extracted.discard("")
    in_catalogue = message_ids(catalogue())
    assert sorted(extracted - in_catalogue) == [], "marked but not in the catalogue: run `make translations`"
    assert sorted(in_catalogue - extracted) == [], "in the catalogue but marked nowhere: run `make translations`"


# Text a template may show unmarked: names that are the same in every language, and symbols.
UNMARKED_ALLOWED = {"TEEI", "TEEI Language", "TEEI Mentorship", "T", "CSV", "XLSX", "PDF", "JSON", "ZIP", "ID", "OK"}
TAG = re.compile(r"<!--.*?-->|<script\b.*?</script>|<style\b.*?</style>|<[^>]*>", re.S)
READABLE_ATTRIBUTE = re.compile(r'\b(?:title|aria-label|placeholder|alt)="([^"]*)"')
PLACEHOLDER = "\x00"


def unmarked_texts(source: str) -> list[str]:
    """Text outside Jinja's tags and HTML's tags that holds a letter, and readable attributes
    written as plain text. Each Jinja construct stands as a placeholder (no letters) while HTML's
    tags are taken out, so a tag with an expression inside is still one tag."""
    held, construct = [], False
    for _line, kind, value in Environment(extensions=["jinja2.ext.i18n"]).lex(source):
        if kind == "data":
            held.append(value)
            construct = False
        elif not construct:
            held.append(PLACEHOLDER)
            construct = True
    text = "".join(held)
    found = [value for value in READABLE_ATTRIBUTE.findall(text) if re.search(r"[A-Za-z]", value)]
    for piece in TAG.sub("\n", text).split("\n"):
        for part in piece.split(PLACEHOLDER):
            part = re.sub(r"&[a-z#0-9]+;", " ", part).strip(" \t·|–—:,.()[]/+-*#>\u00a0")
            if re.search(r"[A-Za-z]", part) and part not in UNMARKED_ALLOWED:
                found.append(part)
    return found


TEMPLATES = sorted(p for p in TEMPLATES_DIR.rglob("*") if p.suffix in (".html", ".txt"))


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(TEMPLATES_DIR)))
def test_every_text_a_template_shows_is_marked_for_translation(template):
    assert unmarked_texts(template.read_text()) == []


def test_the_unmarked_text_check_finds_plain_text_and_plain_attributes():
    # The check above must be able to fail.
    assert unmarked_texts('<p>Hello <b>{{ name }}</b></p><a title="Go there">{{ _("x") }}</a>') == [
        "Go there",
        "Hello",
    ]
    assert unmarked_texts('<p>{{ _("Hello") }}</p><a title="{{ _(\'Go\') }}">TEEI</a>') == []


# --- who reads which language ------------------------------------------------------------------------


def test_a_visitor_reads_their_browsers_language_and_the_page_says_which(client):
    norwegian = client.get("/login", headers={"Accept-Language": "nb-NO,nb;q=0.9,en;q=0.5"}).get_data(as_text=True)
    assert '<html lang="nb">' in norwegian
    assert i18n.translate("nb", "Sign in") in norwegian and i18n.translate("nb", "Sign in") != "Sign in"
    english = client.get("/login", headers={"Accept-Language": "en-GB,en;q=0.9"}).get_data(as_text=True)
    assert '<html lang="en">' in english and ">Sign in<" in english
    # Norwegian as browsers also name it: "no" and Nynorsk read Bokmål; an unknown language reads English.
    assert '<html lang="nb">' in client.get("/login", headers={"Accept-Language": "no"}).get_data(as_text=True)
    assert '<html lang="en">' in client.get("/login", headers={"Accept-Language": "de-DE"}).get_data(as_text=True)


def test_the_switch_keeps_the_page_and_the_visitors_choice_beats_the_browser(client):
    token = csrf_from(client.get("/demo").get_data(as_text=True))
    answer = client.post("/language", data={"language": "nb", "next": "/demo?from=switch", "csrf_token": token})
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/demo?from=switch")
    page = client.get("/demo", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert '<html lang="nb">' in page


def test_the_switch_refuses_an_unknown_language_and_never_sends_a_person_elsewhere(client):
    token = csrf_from(client.get("/login").get_data(as_text=True))
    refused = client.post("/language", data={"language": "sv", "next": "/login", "csrf_token": token})
    assert refused.status_code == 302 and "flash-error" in client.get("/login").get_data(as_text=True)
    assert client.get_cookie("language") is None
    away = client.post("/language", data={"language": "nb", "next": "//evil.example/x", "csrf_token": token})
    assert away.status_code == 302 and "evil.example" not in away.headers["Location"]


def test_a_signed_in_persons_choice_is_kept_for_their_pages_and_their_email(client, auth, make_user, db):
    email = make_user("manager")
    auth.login(email)
    token = csrf_from(client.get("/account").get_data(as_text=True))
    client.post("/language", data={"language": "nb", "next": "/account", "csrf_token": token})
    client.delete_cookie("language")
    page = client.get("/account", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert '<html lang="nb">' in page, "their own choice beats their browser's"
    from portal.auth.queries import reading_language

    with db.read() as conn:
        assert reading_language(conn, email) == "nb"


def test_without_a_choice_or_a_browser_language_a_person_reads_their_companys(client, auth, make_user, db):
    email = make_user("manager", company="Fjord AS")
    with db.write() as conn:
        conn.execute(sa.text("UPDATE companies SET language = 'nb' WHERE name = 'Fjord AS'"))
    auth.login(email)
    assert '<html lang="nb">' in client.get("/account").get_data(as_text=True)
    assert '<html lang="en">' in client.get("/account", headers={"Accept-Language": "en"}).get_data(as_text=True)
    from portal.auth.queries import reading_language

    with db.read() as conn:
        assert reading_language(conn, email) == "nb"
        assert reading_language(conn, "nobody@example.org") == "en"


def test_a_manager_invitation_is_written_in_the_accounts_language_else_the_inviters(ctx, db, make_user):
    from portal.invitations.managers import invite_manager

    inviter = make_user("manager", company="Fjord AS")
    holder = make_user("manager", company="Elsewhere Ltd")
    with db.write() as conn:
        conn.execute(sa.text("UPDATE users SET language = 'en' WHERE email = :e"), {"e": holder})
        company_id = conn.execute(sa.text("SELECT company_id FROM users WHERE email = :e"), {"e": inviter}).scalar()

    def written_in(address: str, page_language: str | None) -> str:
        invite_manager(
            ctx, company_id=company_id, email=address, inviter_id=1, inviter_name="Ola", language=page_language
        )
        with db.read() as conn:
            return conn.execute(
                sa.text("SELECT json_extract(template_input, '$.language') FROM email_outbox WHERE recipient = :a"),
                {"a": address},
            ).scalar()

    assert written_in("new.manager@fjord.example", "nb") == "nb", "no account: the inviting page's language"
    assert written_in("another@fjord.example", None) == "en"
    assert written_in(holder, "nb") == "en", "an account's own choice wins"


def test_a_language_the_database_does_not_know_is_refused():
    assert i18n.choose_language("sv", ["sv-SE"], None) == "en"
    assert i18n.choose_language(None, ["sv-SE", "nn-NO"], "en") == "nb"


# --- numbers and dates ---------------------------------------------------------------------------------


def test_numbers_money_and_dates_are_written_as_each_language_writes_them():
    from datetime import date

    nbsp = "\u00a0"
    assert i18n.number(1234.5, "nb") == f"1{nbsp}234,5" and i18n.number(1234.5, "en") == "1,234.5"
    assert i18n.number(7.25, "nb", 2) == "7,25" and i18n.number(7.25, "en", 2) == "7.25"
    assert i18n.number(3, "nb", 2) == "3,00"
    assert i18n.money(1234.5, "NOK", "nb") == f"1{nbsp}234,50{nbsp}kr"
    assert i18n.day(date(2026, 10, 3), "nb") == "3. okt. 2026" and i18n.day(date(2026, 10, 3), "en") == "3 Oct 2026"
    assert i18n.weekday_and_day(date(2026, 12, 5), "en") == "Sat 5 Dec 2026"


def test_an_erased_persons_stand_in_name_is_shown_in_the_pages_language(app, monkeypatch):
    """The stored "Former volunteer" goes through the catalogue where a page shows a name (issue 47,
    item 8); a real name never does. The catalogue here is a stand-in that marks what it translated."""
    from flask import render_template_string

    import portal.web.i18n as web_i18n

    monkeypatch.setattr(web_i18n, "gettext", lambda message: f"«{message}»")
    with app.test_request_context():
        shown = render_template_string("{{ 'Former volunteer'|person_name }} / {{ 'Ada Lovelace'|person_name }}")
    assert shown == "«Former volunteer» / Ada Lovelace"
