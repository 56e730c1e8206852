"""An email's history in words: the engine hands out kinds and values, the console words every kind it
can produce, in English and Norwegian, and a page reads in its reader's language."""

from __future__ import annotations

import itertools
import json
import re
import uuid

import pytest

from portal.console import words
from portal.core import clock, i18n
from portal.outbox.ground.statuses import ALL
from portal.outbox.hear.suppressions import remove_suppression
from portal.outbox.operate.actions import ACTIONS
from portal.outbox.operate.events import KINDS, TimelineEntry, _describe, timeline
from tests.builders import event

AT = "2026-12-03T14:05:09.000000Z"
ERRORS = (None, "publish_failed: ConnectionError", "sent_again", "provider_error: 500 application_error")


def stored_events():
    """Every shape of stored event the engine's history can hold (kind, statuses, flags, reason)."""
    for kind, status in itertools.product(("created", "erased"), ("pending", "enqueued")):
        yield {"kind": kind, "status_before": None, "status_after": status, "action": None}
    for before, after, action in itertools.product((None, *ALL), ALL, ACTIONS):
        yield {"kind": "operator", "status_before": before, "status_after": after, "action": action}
    for before, after, published, first, error, message_id in itertools.product(
        ALL, ALL, (0, 1), (0, 1), ERRORS, (None, "re_1")
    ):
        yield {
            "kind": "changed",
            "status_before": before,
            "status_after": after,
            "published": published,
            "first_attempt": first,
            "last_error": error,
            "provider_message_id": message_id,
        }


def described() -> dict[str, TimelineEntry]:
    """One entry of each kind _describe makes from a stored event."""
    base = {
        "created_at": AT,
        "attempt": 2,
        "outcome_unknown": 1,
        "last_error": None,
        "provider_message_id": None,
        "next_attempt_at": "2026-12-03T14:10:00.000000Z",
        "published": 0,
        "first_attempt": 0,
        "action": None,
        "actor_email": "admin@example.org",
        "reason": "checked",
        "related_outbox_id": "ntc_2",
    }
    return {entry.kind: entry for entry in (_describe({**base, **shape}) for shape in stored_events())}


@pytest.fixture
def from_receipts(ctx, make_outbox_row, outbox_row, admin, user_id):
    """The kinds a history takes from receipts and suppressions, made as production makes them: a
    bounce (its receipt, the status it sets, the address suppressed), then the address released."""
    from portal.outbox.hear.receipts import apply_receipt_event

    outbox_id = make_outbox_row(recipient="ada@example.com", status="sent", provider_message_id="re_msg_1")
    body = json.dumps(event("email.bounced", email_id="re_msg_1", to="ada@example.com", outbox_id=outbox_id))
    apply_receipt_event(ctx.db, f"msg_{uuid.uuid4().hex}", body.encode(), environment="development", now=clock.utcnow())
    remove_suppression(
        ctx.db, email="ada@example.com", reason="asked us", actor_user_id=user_id(admin), now=clock.utcnow()
    )
    return {entry.kind: entry for entry in timeline(ctx.db, outbox_row(outbox_id))}


def test_the_engine_produces_exactly_its_kinds_and_every_one_has_words(app, from_receipts):
    produced = {**from_receipts, **described()}
    assert set(produced) == set(KINDS), "KINDS names exactly what the history can hold"
    for kind, entry in produced.items():
        assert kind in words.TITLES, f"{kind} has no words"
        worded = {}
        for language in i18n.LANGUAGES:
            with app.test_request_context(headers={"Accept-Language": language}):
                (worded[language],) = words.history([entry])
        english, norwegian = worded["en"], worded["nb"]
        for shown in (english, norwegian):
            assert shown.title and not re.search(r"%\(|\{|\}", shown.title), (kind, shown.title)
            assert not any("%(" in line for line in shown.details), (kind, shown.details)
        assert norwegian.title != english.title, f"{kind}: the Norwegian title is the English one"
        if entry.at == AT:
            assert (english.display_at, norwegian.display_at) == (
                "3 Dec 2026, 15:05:09 CET",  # the portal's zone, as every time of the console
                "3. des. 2026, 15:05:09 CET",
            )


def test_a_status_a_receipt_set_and_a_lookup_receipt_read_in_words(app):
    moved = TimelineEntry(at="2026-12-03T14:05:09.000000Z", kind="status_from_receipt", status="bounced")
    looked_up = TimelineEntry(
        at="2026-12-03T14:05:09.000000Z", kind="receipt", receipt_type="email.delivered", from_lookup=True
    )
    unknown = TimelineEntry(at="2026-12-03T14:05:09.000000Z", kind="receipt", receipt_type="email.scheduled")
    with app.test_request_context(headers={"Accept-Language": "en"}):
        entries = words.history([moved, looked_up, unknown])
        assert [(e.title, e.tone) for e in entries] == [
            ("Status now bounced", "bad"),
            ("Delivered to the recipient's server (learned by asking Resend)", "ok"),
            ("Receipt from Resend: email.scheduled", "ok"),
        ]
        assert entries[1].details == ["receipt email.delivered, from a lookup", "applied as: not yet processed"]
    with app.test_request_context(headers={"Accept-Language": "nb"}):
        entries = words.history([moved, looked_up])
        assert entries[0].title == i18n.translate("nb", "Status now %(status)s", status="avvist")
        assert entries[1].details[1] == i18n.translate("nb", "applied as: %(outcome)s", outcome="ikke behandlet ennå")


def test_a_retried_email_reads_in_norwegian_on_its_page(client, admin, make_outbox_row, provider_model, deliver):
    outbox_id = make_outbox_row(publish=True)
    provider_model.fail_next("http_500")
    assert deliver(outbox_id).startswith("retry:")

    def history(language):
        page = client.get(f"/admin/outbox/{outbox_id}", headers={"Accept-Language": language}).get_data(as_text=True)
        page = page.replace("&#39;", "'")
        titles = re.findall(r'<p class="timeline-title">([^<]+)</p>', page)
        details = re.findall(r'<p class="muted">([^<]+)</p>', page[page.index('class="timeline"') :])
        return titles, details

    titles, details = history("en")
    assert titles == [
        "Written, waiting to be sent",
        "Queued for sending",
        "Being sent (attempt 1)",
        "Not sent this time; it will be tried again",
    ]
    assert "the provider failed (5xx): retried; it may have sent the email" in details
    assert "attempt 1: provider_error: 500 application_error" in details

    titles, details = history("nb")
    assert titles == [
        i18n.translate("nb", "Written, waiting to be sent"),
        i18n.translate("nb", "Queued for sending"),
        i18n.translate("nb", "Being sent (attempt %(attempt)d)", attempt=1),
        i18n.translate("nb", "Not sent this time; it will be tried again"),
    ]
    assert titles[2] == "Sendes (forsøk 1)"
    assert i18n.translate("nb", "the provider failed (5xx): retried; it may have sent the email") in details
    # What the engine stores stays as it stores it, in a Norwegian sentence.
    assert "forsøk 1: provider_error: 500 application_error" in details
    assert any(line.startswith("neste forsøk ") and re.search(r"\d\d:\d\d:\d\d CES?T$", line) for line in details)


@pytest.mark.parametrize(
    ("bounce", "title", "detail"),
    [
        (
            {"type": "Permanent", "subType": "NoEmail"},
            "Bounced: the mailbox does not exist",
            "bounce class: no_mailbox",
        ),
        (
            {"type": "Transient", "subType": "MailboxFull"},
            "Bounced: the mailbox is full",
            "bounce class: mailbox_full (soft: suppresses as the second within 30 days)",
        ),
        (
            {"type": "Permanent", "subType": "General"},
            "Bounced: blocked by the receiving server",
            "bounce class: blocked",
        ),
        (
            {"type": "Transient", "subType": "ContentRejected"},
            "Bounced: the message was rejected as spam",
            "bounce class: spam",
        ),
        (
            {"type": "Transient", "subType": "General"},
            "Bounced: a temporary failure",
            "bounce class: temporary (soft: suppresses as the second within 30 days)",
        ),
    ],
)
def test_a_bounce_reads_as_its_class(app, ctx, make_outbox_row, outbox_row, bounce, title, detail):
    """The receipt as the engine keeps it, read back through the email's timeline."""
    from portal.outbox.hear.receipts import apply_receipt_event

    outbox_id = make_outbox_row(status="sent", provider_message_id="re_msg_1", recipient="ada@example.com")
    body = json.dumps(event("email.bounced", email_id="re_msg_1", to="ada@example.com", bounce=bounce))
    apply_receipt_event(ctx.db, f"msg_{uuid.uuid4().hex}", body.encode(), environment="development", now=clock.utcnow())
    with app.test_request_context(headers={"Accept-Language": "en"}):
        [entry] = [e for e in words.history(timeline(ctx.db, outbox_row(outbox_id))) if e.title.startswith("Bounced")]
    assert entry.title == title
    assert entry.details[-1] == detail
