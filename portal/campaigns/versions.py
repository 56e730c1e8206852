"""A campaign's versions, one per language: English always (`subject`, `body`), Norwegian when the
admin wrote one (`subject_nb`, `body_nb`, both or neither; migrations/0040_campaign_versions.sql).

Each recipient gets the version of their reading language (their own choice, else their company's),
and the English one when the campaign has none in it. No Flask here: the worker writes the rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from portal.core.i18n import ENGLISH, N_, NORWEGIAN

# The order versions are shown and counted in, and how a page names each.
LANGUAGES = (ENGLISH, NORWEGIAN)
NAMES = {ENGLISH: N_("English"), NORWEGIAN: N_("Norwegian")}


@dataclass(frozen=True)
class Version:
    language: str
    subject: str
    body: str  # Markdown, as the admin wrote it


def versions_of(campaign: Mapping) -> dict[str, Version]:
    """{language: version} of a `campaigns` row (as a mapping), English first."""
    found = {ENGLISH: Version(ENGLISH, campaign["subject"], campaign["body"])}
    if campaign.get("subject_nb") and campaign.get("body_nb"):
        found[NORWEGIAN] = Version(NORWEGIAN, campaign["subject_nb"], campaign["body_nb"])
    return found


def version_for(reading_language: str | None, available: Iterable[str]) -> str:
    """The version a person who reads `reading_language` gets: theirs if the campaign has it, else English."""
    return reading_language if reading_language in set(available) else ENGLISH


def counted(languages: Iterable[str], available: Iterable[str]) -> dict[str, int]:
    """{version: how many people get it} for people of these reading languages; every version
    the campaign has is listed, with 0 if nobody gets it."""
    available = [language for language in LANGUAGES if language in set(available)]
    counts = dict.fromkeys(available, 0)
    for language in languages:
        counts[version_for(language, available)] += 1
    return counts
