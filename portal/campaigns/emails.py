"""The campaign email, in two families: the campaign itself (the bulk queue) and an admin's test
send (the transactional queue: the admin is waiting for it).

Each recipient's row stores the person's user ID and the language of the version they get (their
reading language's, else English: versions.py); the version's Markdown and subject are stored once
per campaign and version (the shared input, distinct per language). The HTML, the text part and
the unsubscribe link are made at render time, the email's own words in the version's language. The
HTML part also records when it was prepared, in a comment (for support; a volunteer never sees it),
so two renders of the same row differ: only the frozen first attempt makes a retry send the bytes
the provider already has under the row's key.
"""

from __future__ import annotations

from datetime import datetime

from portal.campaigns.markdown import to_html, to_text
from portal.campaigns.tokens import unsubscribe_url
from portal.campaigns.versions import versions_of
from portal.core import clock
from portal.core.i18n import ENGLISH, language_of, translate
from portal.outbox import BROADCAST, BULK_EMAIL_QUEUE, EMAIL_QUEUE, EmailIntent, Family


def _subject(data: dict) -> str:
    if data.get("test"):
        return translate(language_of(data), "[Test] %(subject)s", subject=data["subject"])
    return data["subject"]


def _prepare(data: dict, settings) -> dict:
    return {
        **data,
        "test": bool(data.get("test")),
        "body_html": to_html(data["body"]),
        "body_text": to_text(data["body"]),
        "unsubscribe_url": unsubscribe_url(
            settings.public_base_url, settings.secret_key, data["user_id"], data["campaign_id"]
        ),
        "prepared_at": _prepared_at(data["rendered_at"]),
    }


def _prepared_at(moment: datetime) -> str:
    return clock.iso(moment)  # machine time in a comment, never shown


def _headers(data: dict, settings) -> dict[str, str]:
    """RFC 8058 one-click unsubscribe: mail clients POST `List-Unsubscribe=One-Click` to the URL."""
    return {
        "List-Unsubscribe": f"<{data['unsubscribe_url']}>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    }


def _family(name: str, id_prefix: str, queue: str, batchable: bool) -> Family:
    return Family(
        name=name,
        id_prefix=id_prefix,
        template="campaign",
        template_version=1,
        subject=_subject,
        prepare=_prepare,
        headers=_headers,
        queue=queue,
        batchable=batchable,
        # Only the link differs between two recipients of one version: a batch renders it once.
        personal=("user_id", "recipient_name", "unsubscribe_url"),
        # Broadcast mail: sent from CAMPAIGN_FROM with the `stream` tag `broadcast`. The admin's test
        # copy too, so it shows the sender its recipients will see.
        stream=BROADCAST,
    )


CAMPAIGN = _family("campaign", "cmp", BULK_EMAIL_QUEUE, batchable=True)
CAMPAIGN_TEST = _family("campaign_test", "cmt", EMAIL_QUEUE, batchable=False)
FAMILIES = (CAMPAIGN, CAMPAIGN_TEST)


def subject_ref(campaign_id: int) -> str:
    return f"campaign:{campaign_id}"


def campaign_input(campaign, language: str = ENGLISH) -> dict:
    """What every recipient's row of one version stores of the campaign (`campaign`: a `campaigns`
    row as a mapping): the version in `language`, or the English one if it has none in it. The
    language is part of it, so each version is its own shared input."""
    found = versions_of(campaign)
    version = found.get(language, found[ENGLISH])
    return {
        "campaign_id": campaign["id"],
        "subject": version.subject,
        "body": version.body,
        "language": version.language,
    }


def recipient_key(campaign_id: int, user_id: int) -> str:
    return f"campaign:{campaign_id}:user:{user_id}"


def recipient_email(shared: dict, *, user_id: int, email: str, name: str) -> EmailIntent:
    """One person's copy: one key per (campaign, person), so a batch written twice is one email each."""
    return EmailIntent(
        family=CAMPAIGN,
        recipient=email,
        idempotency_key=recipient_key(shared["campaign_id"], user_id),
        subject_ref=subject_ref(shared["campaign_id"]),
        data={"user_id": user_id, "recipient_name": name, "language": shared["language"]},
        shared=shared,
    )


def test_email(shared: dict, *, admin, request_id: str) -> EmailIntent:
    """The signed-in admin's test copy of one version, keyed by the form's request ID (and the
    version, but for English): a double click is one email, each version's button one email each."""
    version = "" if shared["language"] == ENGLISH else f":{shared['language']}"
    return EmailIntent(
        family=CAMPAIGN_TEST,
        recipient=admin.email,
        idempotency_key=f"campaign-test:{shared['campaign_id']}:admin:{admin.id}:{request_id}{version}",
        subject_ref=f"campaign-test:{shared['campaign_id']}",
        data={**shared, "user_id": admin.id, "recipient_name": admin.name, "test": True},
    )
