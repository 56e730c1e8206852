"""Bounce classes: Resend's bounce type and subType kept with the receipt as a class, and a soft
bounce (mailbox full, temporary) suppressing only as the second within 30 days.

The engine's side, called as the webhook calls it once the signature is verified; over the provider
model and the real workers: tests/webhooks/test_receipts_from_provider_model.py and
tests/outbox/test_bounce_classes_delivered.py."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from portal.core import clock
from portal.outbox.ground import bounce_classes
from portal.outbox.ground.bounce_classes import BLOCKED, MAILBOX_FULL, NO_MAILBOX, SPAM, TEMPORARY, classify
from portal.outbox.hear.receipts import SOFT_BOUNCES_REASON, apply_receipt_event
from tests.builders import T0, event


@pytest.fixture
def receive(ctx):
    def receive(payload, event_id=None):
        return apply_receipt_event(
            ctx.db,
            event_id or f"msg_{uuid.uuid4().hex}",
            json.dumps(payload).encode(),
            environment=ctx.settings.portal_env,
            now=clock.utcnow(),
        )

    return receive


def day(n: float) -> str:
    return (T0 + timedelta(days=n)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def bounce(kind, subtype, *, email_id="re_msg_1", to="ada@example.com", created_at=None):
    return event(
        "email.bounced",
        email_id=email_id,
        to=to,
        created_at=created_at or day(0),
        bounce={"type": kind, "subType": subtype, "message": "said the server"},
    )


def suppressed(db) -> list[tuple[str, str]]:
    with db.read() as conn:
        return [tuple(r) for r in conn.execute(sa.text("SELECT email, reason FROM email_suppressions ORDER BY email"))]


def kept_classes(db) -> list[str | None]:
    with db.read() as conn:
        return [r[0] for r in conn.execute(sa.text("SELECT bounce_class FROM email_receipts ORDER BY id"))]


@pytest.mark.parametrize(
    ("kind", "subtype", "expected"),
    [
        ("Permanent", "NoEmail", NO_MAILBOX),
        ("Permanent", "Suppressed", NO_MAILBOX),
        ("Permanent", "OnAccountSuppressionList", NO_MAILBOX),
        ("Permanent", "General", BLOCKED),
        ("Permanent", None, BLOCKED),
        (None, None, BLOCKED),  # untyped: permanent, as the engine always read it
        ("Transient", "MailboxFull", MAILBOX_FULL),
        ("Transient", "ContentRejected", SPAM),
        ("Transient", "AttachmentRejected", SPAM),
        ("Transient", "General", TEMPORARY),
        ("Transient", "MessageTooLarge", TEMPORARY),
        ("Undetermined", "Undetermined", TEMPORARY),
        ("transient", "mailboxfull", MAILBOX_FULL),  # read whatever the case
    ],
)
def test_type_and_subtype_make_a_class(kind, subtype, expected):
    assert classify(kind, subtype) == expected


def test_only_mailbox_full_and_temporary_are_soft():
    assert bounce_classes.SOFT == {MAILBOX_FULL, TEMPORARY}
    assert bounce_classes.HARD == {NO_MAILBOX, BLOCKED, SPAM}


def test_the_class_is_kept_with_the_receipt_and_only_a_bounce_has_one(receive, make_outbox_row, db):
    make_outbox_row(status="sent", provider_message_id="re_msg_1", recipient="ada@example.com")
    receive(event("email.delivered", created_at=day(0)))
    receive(bounce("Permanent", "NoEmail", created_at=day(1)))
    assert kept_classes(db) == [None, NO_MAILBOX]
    with db.read() as conn:
        payload = json.loads(conn.execute(sa.text("SELECT payload FROM email_receipts ORDER BY id DESC")).scalar())
    assert (payload["bounce_type"], payload["bounce_subtype"]) == ("Permanent", "NoEmail")


@pytest.mark.parametrize(
    ("kind", "subtype"), [("Permanent", "NoEmail"), ("Permanent", "General"), ("Transient", "ContentRejected")]
)
def test_a_hard_bounce_suppresses_at_once(receive, make_outbox_row, db, kind, subtype):
    make_outbox_row(status="sent", provider_message_id="re_msg_1", recipient="ada@example.com")
    receive(bounce(kind, subtype))
    assert suppressed(db) == [("ada@example.com", "bounced (permanent)")]


@pytest.mark.parametrize("subtype", ["MailboxFull", "General"])
def test_one_soft_bounce_does_not_suppress_and_the_second_within_30_days_does(receive, make_outbox_row, db, subtype):
    make_outbox_row(status="sent", provider_message_id="re_msg_1", recipient="ada@example.com")
    make_outbox_row(status="sent", provider_message_id="re_msg_2", recipient="ada@example.com")
    receive(bounce("Transient", subtype, email_id="re_msg_1", created_at=day(0)))
    assert suppressed(db) == []

    receive(bounce("Transient", subtype, email_id="re_msg_2", created_at=day(30)))
    assert suppressed(db) == [("ada@example.com", SOFT_BOUNCES_REASON)]


@pytest.mark.parametrize("days", [(0, 30.5), (40, 0)], ids=["in order", "the newer first"])
def test_two_soft_bounces_further_apart_than_30_days_do_not_suppress(receive, make_outbox_row, db, days):
    make_outbox_row(status="sent", provider_message_id="re_msg_1", recipient="ada@example.com")
    make_outbox_row(status="sent", provider_message_id="re_msg_2", recipient="ada@example.com")
    receive(bounce("Transient", "MailboxFull", email_id="re_msg_1", created_at=day(days[0])))
    receive(bounce("Transient", "MailboxFull", email_id="re_msg_2", created_at=day(days[1])))
    assert suppressed(db) == []


def test_the_older_soft_bounce_arriving_second_still_counts(receive, make_outbox_row, db):
    make_outbox_row(status="sent", provider_message_id="re_msg_1", recipient="ada@example.com")
    make_outbox_row(status="sent", provider_message_id="re_msg_2", recipient="ada@example.com")
    receive(bounce("Transient", "General", email_id="re_msg_2", created_at=day(20)))
    receive(bounce("Transient", "MailboxFull", email_id="re_msg_1", created_at=day(0)))
    assert suppressed(db) == [("ada@example.com", SOFT_BOUNCES_REASON)]


def test_soft_bounces_of_two_addresses_do_not_add_up(receive, make_outbox_row, db):
    make_outbox_row(status="sent", provider_message_id="re_msg_1", recipient="ada@example.com")
    make_outbox_row(status="sent", provider_message_id="re_msg_2", recipient="bob@example.com")
    receive(bounce("Transient", "MailboxFull", email_id="re_msg_1", to="ada@example.com"))
    receive(bounce("Transient", "MailboxFull", email_id="re_msg_2", to="bob@example.com"))
    assert suppressed(db) == []


def test_a_redelivered_soft_bounce_is_one_bounce(receive, make_outbox_row, db):
    make_outbox_row(status="sent", provider_message_id="re_msg_1", recipient="ada@example.com")
    payload = bounce("Transient", "MailboxFull")
    assert receive(payload, event_id="msg_full") == "applied"
    assert receive(payload, event_id="msg_full") == "duplicate"
    assert suppressed(db) == []


def test_a_hard_bounce_after_a_soft_one_suppresses_as_hard(receive, make_outbox_row, db):
    make_outbox_row(status="sent", provider_message_id="re_msg_1", recipient="ada@example.com")
    make_outbox_row(status="sent", provider_message_id="re_msg_2", recipient="ada@example.com")
    receive(bounce("Transient", "MailboxFull", email_id="re_msg_1", created_at=day(0)))
    receive(bounce("Permanent", "NoEmail", email_id="re_msg_2", created_at=day(1)))
    assert suppressed(db) == [("ada@example.com", "bounced (permanent)")]
