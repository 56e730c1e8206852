"""Resend's suppression list, followed: its signed suppression.added / suppression.removed events
move the portal's list once, audited as the webhook's, and an erased address is added and found by
its keyed hash. The engine's side, as the webhook calls it; over HTTP from the provider model:
tests/webhooks/test_receipts_from_provider_model.py."""

from __future__ import annotations

import json
import uuid

import pytest
import sqlalchemy as sa

from devtools.testing import wait_until
from portal.core import clock
from portal.core.pseudonyms import address_hash
from portal.outbox.hear.receipts import apply_receipt_event
from portal.outbox.hear.suppressions import ADDED_AT_PROVIDER, REMOVED_AT_PROVIDER
from tests.builders import at


@pytest.fixture
def receive(ctx):
    def receive(kind, email, event_id=None, secret_key=ctx.settings.secret_key):
        body = {
            "type": kind,
            "created_at": at(0),
            "data": {"id": str(uuid.uuid4()), "email": email, "origin": "manual", "created_at": at(-1)},
        }
        return apply_receipt_event(
            ctx.db,
            event_id or f"msg_{uuid.uuid4().hex}",
            json.dumps(body).encode(),
            environment=ctx.settings.portal_env,
            now=clock.utcnow(),
            secret_key=secret_key,
        )

    return receive


def listed(db) -> list[tuple]:
    with db.read() as conn:
        return [
            tuple(r)
            for r in conn.execute(sa.text("SELECT email, reason, source FROM email_suppressions ORDER BY email"))
        ]


def audit(db) -> list[tuple]:
    with db.read() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                sa.text("SELECT email, action, reason, source, actor_user_id FROM email_suppression_events ORDER BY id")
            )
        ]


def test_added_at_resend_is_added_here_once_and_audited(receive, db):
    assert receive("suppression.added", "Ada@Example.com", event_id="msg_add") == "applied"
    assert receive("suppression.added", "Ada@Example.com", event_id="msg_add") == "duplicate"
    assert receive("suppression.added", "ada@example.com") == "no_status_change"  # already listed
    assert listed(db) == [("ada@example.com", ADDED_AT_PROVIDER, "webhook")]
    assert audit(db) == [("ada@example.com", "add", ADDED_AT_PROVIDER, "webhook", None)]


def test_removed_at_resend_is_removed_here_and_audited(receive, db):
    receive("suppression.added", "ada@example.com")
    assert receive("suppression.removed", "ada@example.com") == "applied"
    assert receive("suppression.removed", "ada@example.com") == "no_status_change"
    assert listed(db) == []
    assert audit(db)[-1] == ("ada@example.com", "remove", REMOVED_AT_PROVIDER, "webhook", None)


def erase(db, email, secret_key):
    """What an erasure leaves: the address's hash recorded, and its suppression under that hash."""
    with db.write() as conn:
        conn.execute(
            sa.text("INSERT INTO erased_addresses (address_hash, pseudonym, erased_at) VALUES (:h, :p, :now)"),
            {
                "h": address_hash(email, secret_key),
                "p": f"{uuid.uuid4().hex}@erased.invalid",
                "now": clock.iso(clock.utcnow()),
            },
        )
        conn.execute(
            sa.text("UPDATE email_suppressions SET email = :h WHERE email = :e"),
            {"h": address_hash(email, secret_key), "e": email},
        )


def test_an_erased_address_is_found_by_its_hash_and_never_written_plain(receive, db, ctx):
    secret = ctx.settings.secret_key
    receive("suppression.added", "ada@example.com")
    erase(db, "ada@example.com", secret)
    hashed = address_hash("ada@example.com", secret)
    assert [row[0] for row in listed(db)] == [hashed]

    assert receive("suppression.removed", "ADA@example.com") == "applied"
    assert listed(db) == []
    assert audit(db)[-1][:2] == (hashed, "remove")

    assert receive("suppression.added", "ada@example.com") == "applied"
    assert [row[0] for row in listed(db)] == [hashed]
    assert "ada@example.com" not in {row[0] for row in audit(db)[1:]}


def test_without_the_secret_key_the_events_change_nothing(receive, db):
    assert receive("suppression.added", "ada@example.com", secret_key=None) == "ignored_type"
    assert listed(db) == []


def test_the_receipt_keeps_no_address(receive, db):
    receive("suppression.added", "ada@example.com")
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT payload FROM email_receipts")).scalar() is None


def test_a_worker_compares_the_lists_at_its_start(ctx, provider_model, workers):
    """The daily comparison runs in the worker's periodic schedule (suppression_comparison.py), its
    first pass when the worker starts: a difference shows without anyone running the command."""
    provider_model.suppress("only.there@example.org")
    workers()

    def found():
        with ctx.db.read() as conn:
            return dict(conn.execute(sa.text("SELECT email, cause FROM email_suppression_differences")).all())

    assert wait_until(lambda: found() == {"only.there@example.org": "never_in_portal"}, timeout=60), found()
