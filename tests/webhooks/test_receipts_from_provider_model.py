"""End to end over real HTTP: the provider model posts signed receipts to the portal, served on a
free port, and the portal verifies and applies them. The send itself goes through the resend SDK;
the engine's part (recording acceptance) is its own mark_sent."""

from __future__ import annotations

import pytest
import resend
import sqlalchemy as sa

from devtools.provider_model import ProviderModel
from portal.core import clock
from portal.outbox.ground.rows import mark_sent
from portal.outbox.ground.statuses import BOUNCED, COMPLAINED, DEAD_LETTER, DELIVERED, PROCESSING, UNKNOWN_OUTCOME
from portal.outbox.operate.reads import receipt_counts


@pytest.fixture
def provider(live_portal, settings, monkeypatch):
    model = ProviderModel(
        port=0, webhook_url=f"{live_portal}/webhooks/resend", webhook_secret=settings.resend_webhook_secret
    ).start()
    monkeypatch.setattr(resend, "api_key", "re_test")
    monkeypatch.setattr(resend, "api_url", model.url)
    yield model
    model.stop()


def send_for_row(outbox_id, to="ada@example.com", environment="development"):
    """What the engine sends: the portal's three tags on every email."""
    return resend.Emails.send(
        {
            "from": "Partner Portal <portal@localhost>",
            "to": [to],
            "subject": "You are invited",
            "text": "Hello",
            "html": "<p>Hello</p>",
            "tags": [
                {"name": "environment", "value": environment},
                {"name": "family", "value": "invitation"},
                {"name": "outbox_id", "value": outbox_id},
            ],
        },
        {"idempotency_key": f"invitation/{outbox_id}"},
    )["id"]


def test_receipts_move_an_accepted_email_to_delivered(provider, make_outbox_row, outbox_row, db):
    outbox_id = make_outbox_row(status=PROCESSING, provider_message_id=None)
    provider.pause_receipts()
    message_id = send_for_row(outbox_id)
    assert mark_sent(db, outbox_id, message_id, now=clock.utcnow())  # the engine records the acceptance
    provider.resume_receipts()
    provider.wait_for_receipts()

    assert [(r["type"], r["state"], r["last_status"]) for r in provider.receipts()] == [
        ("email.sent", "delivered", 200),
        ("email.delivered", "delivered", 200),
    ]
    row = outbox_row(outbox_id)
    assert (row["status"], row["provider_message_id"]) == (DELIVERED, message_id)
    assert receipt_counts(db) == {"applied": 2}


def test_lost_answer_is_settled_by_the_receipts_through_the_outbox_id_tag(provider, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=PROCESSING, provider_message_id=None)
    provider.fail_next("drop_after_accept")
    with pytest.raises(resend.exceptions.ResendError):
        send_for_row(outbox_id)
    # The engine later met invalid_idempotent_request and wrote the row off as an unknown outcome.
    provider.wait_for_receipts()
    row = outbox_row(outbox_id)
    [sent] = provider.sent()
    assert (row["status"], row["provider_message_id"]) == (DELIVERED, sent["id"])


def test_lost_answer_on_a_dead_letter_row_is_settled(provider, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=DEAD_LETTER, provider_message_id=None, last_error=UNKNOWN_OUTCOME)
    provider.pause_receipts()
    send_for_row(outbox_id)
    provider.resume_receipts()
    provider.wait_for_receipts()
    assert outbox_row(outbox_id)["status"] == DELIVERED


def test_bounce_suppresses_and_complaint_suppresses(provider, make_outbox_row, outbox_row, db):
    bounced = make_outbox_row(status=PROCESSING, provider_message_id=None, recipient="bounce@example.com")
    complained = make_outbox_row(status=PROCESSING, provider_message_id=None, recipient="complain@example.com")
    send_for_row(bounced, to="bounce@example.com")
    send_for_row(complained, to="complain@example.com")
    provider.wait_for_receipts()

    assert outbox_row(bounced)["status"] == BOUNCED
    assert outbox_row(complained)["status"] == COMPLAINED
    with db.read() as conn:
        listed = conn.execute(sa.text("SELECT email, source FROM email_suppressions ORDER BY email")).all()
    assert listed == [("bounce@example.com", "webhook"), ("complain@example.com", "webhook")]


def test_redelivered_receipt_is_applied_once(provider, make_outbox_row, db, count):
    outbox_id = make_outbox_row(status=PROCESSING, provider_message_id=None, recipient="bounce@example.com")
    send_for_row(outbox_id, to="bounce@example.com")
    provider.wait_for_receipts()
    for receipt in provider.receipts():
        provider.redeliver_receipt(receipt["id"])
    provider.wait_for_receipts()

    assert count("email_receipts") == 3  # sent, bounced, and Resend's suppression.added
    assert count("email_suppression_events") == 1
    assert {r["state"] for r in provider.receipts()} == {"delivered"}


def test_other_environments_mail_is_acknowledged_and_counted(provider, make_outbox_row, outbox_row, db):
    outbox_id = make_outbox_row(status=PROCESSING, provider_message_id=None)
    send_for_row(outbox_id, environment="staging")
    provider.wait_for_receipts()
    assert {r["last_status"] for r in provider.receipts()} == {200}
    assert outbox_row(outbox_id)["status"] == PROCESSING
    assert receipt_counts(db) == {"other_environment": 2}


def test_receipts_signed_with_another_secret_are_refused(live_portal, count, monkeypatch):
    model = ProviderModel(
        port=0,
        webhook_url=f"{live_portal}/webhooks/resend",
        webhook_secret="whsec_b3RoZXItc2VjcmV0LW5vdC1vdXJzLWF0LWFsbA==",
    ).start()
    try:
        monkeypatch.setattr(resend, "api_key", "re_test")
        monkeypatch.setattr(resend, "api_url", model.url)
        send_for_row("inv_" + "1" * 32)
        model.wait_for_receipts()
        assert {(r["state"], r["last_status"]) for r in model.receipts()} == {("failed", 401)}
        assert count("email_receipts") == 0
    finally:
        model.stop()


def test_changes_to_resends_suppression_list_reach_the_portals(provider, db):
    """Added and removed through Resend's API (the SDK): its signed events move the portal's list."""
    resend.Suppressions.add({"email": "ada@example.com"})
    provider.wait_for_receipts()
    with db.read() as conn:
        listed = conn.execute(sa.text("SELECT email, reason, source FROM email_suppressions")).all()
    assert listed == [("ada@example.com", "added at Resend", "webhook")]

    resend.Suppressions.remove("ada@example.com")
    provider.wait_for_receipts()
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM email_suppressions")).scalar() == 0
        audited = conn.execute(sa.text("SELECT email, action, source FROM email_suppression_events ORDER BY id")).all()
    assert audited == [("ada@example.com", "add", "webhook"), ("ada@example.com", "remove", "webhook")]
