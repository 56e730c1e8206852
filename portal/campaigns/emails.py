"""The campaign email, in two families: the campaign itself (the bulk queue) and an admin's test
send (the transactional queue: the admin is waiting for it).

Each recipient's row stores the campaign's Markdown, subject and the person's user ID; the HTML,
the text part and the unsubscribe link are made at render time. The HTML part also records when it was prepared, in
a comment (for support; a volunteer never sees it), so two renders of the same row differ: only the
frozen first attempt makes a retry send the bytes the provider already has under the row's key.
"""

from __future__ import annotations

from datetime import datetime

from portal.campaigns.markdown import to_html, to_text
from portal.campaigns.tokens import unsubscribe_url
from portal.core import clock
from portal.outbox import BULK_EMAIL_QUEUE, EMAIL_QUEUE, EmailIntent, Family


def _subject(data: dict) -> str:
    return ("[Test] " if data.get("test") else "") + data["subject"]


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
    )


CAMPAIGN = _family("campaign", "cmp", BULK_EMAIL_QUEUE, batchable=True)
CAMPAIGN_TEST = _family("campaign_test", "cmt", EMAIL_QUEUE, batchable=False)
FAMILIES = (CAMPAIGN, CAMPAIGN_TEST)


def subject_ref(campaign_id: int) -> str:
    return f"campaign:{campaign_id}"


def campaign_input(campaign) -> dict:
    """What every recipient's row stores of the campaign (`campaign`: a `campaigns` row as a mapping)."""
    return {"campaign_id": campaign["id"], "subject": campaign["subject"], "body": campaign["body"]}


def recipient_key(campaign_id: int, user_id: int) -> str:
    return f"campaign:{campaign_id}:user:{user_id}"


def recipient_email(shared: dict, *, user_id: int, email: str, name: str) -> EmailIntent:
    """One person's copy: one key per (campaign, person), so a batch written twice is one email each."""
    return EmailIntent(
        family=CAMPAIGN,
        recipient=email,
        idempotency_key=recipient_key(shared["campaign_id"], user_id),
        subject_ref=subject_ref(shared["campaign_id"]),
        data={"user_id": user_id, "recipient_name": name},
        shared=shared,
    )


def test_email(shared: dict, *, admin, request_id: str) -> EmailIntent:
    """The signed-in admin's test copy, keyed by the form's request ID: a double click is one email."""
    return EmailIntent(
        family=CAMPAIGN_TEST,
        recipient=admin.email,
        idempotency_key=f"campaign-test:{shared['campaign_id']}:admin:{admin.id}:{request_id}",
        subject_ref=f"campaign-test:{shared['campaign_id']}",
        data={**shared, "user_id": admin.id, "recipient_name": admin.name, "test": True},
    )
