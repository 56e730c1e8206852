"""Every email family has words a page shows, marked for the catalogue (issue 47, item 8): a Norwegian
console names families in Norwegian once the lead has translated them, never by their code."""

from __future__ import annotations

import ast
from pathlib import Path

from portal.console.words import FAMILY_WORDS
from portal.email_families import FAMILIES

WORDS_FILE = Path(__file__).resolve().parents[2] / "portal" / "console" / "words.py"


def test_every_family_the_portal_sends_has_words():
    assert set(FAMILY_WORDS) == {family.name for family in FAMILIES}


def test_the_words_are_marked_for_the_catalogue():
    """What `make translations` extracts: each word is a literal inside N_(...) in words.py."""
    marked = {
        node.args[0].value
        for node in ast.walk(ast.parse(WORDS_FILE.read_text()))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "N_" and node.args
    }
    assert set(FAMILY_WORDS.values()) <= marked
