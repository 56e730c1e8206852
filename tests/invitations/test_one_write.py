"""Inviting colleagues is one write transaction for the invitations, their emails and the batch
those emails ride in; their publication after it writes nothing (the rows are `enqueued` from the
commit), and a crash between the two leaves rows the relay publishes with their batch a stale
period later. Each test here fails on the old path (composition as a write of its own at
publication, then a publication mark), on a file and on sqld."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa

from portal.core import clock
from portal.invitations import operations
from portal.outbox.ground.queues import email_queue
from portal.outbox.ground.statuses import ENQUEUED
from portal.outbox.write import unit_of_work
from portal.outbox.write.relay import relay_pass
from tests.outbox.test_publish import count_write_transactions

COLLEAGUES = [f"colleague{n}@acme.example" for n in range(20)]


@pytest.fixture
def write_transactions(ctx, monkeypatch):
    """The write transactions the database handle opens from now on (BEGIN IMMEDIATE)."""
    return count_write_transactions(ctx.db, monkeypatch)


def invitation_rows(db):
    with db.read() as conn:
        return (
            conn.execute(
                sa.text(
                    "SELECT id, recipient, status, batch_id, batch_position, idempotency_key, subject_ref, "
                    "template_input FROM email_outbox WHERE family = 'invitation' ORDER BY rowid"
                )
            )
            .mappings()
            .all()
        )


def test_inviting_twenty_writes_once(ctx, manager, write_transactions):
    result = operations.invite_colleagues(ctx, manager=manager, addresses=COLLEAGUES, programme="language")
    assert result.invited == tuple(COLLEAGUES) and result.queued
    assert len(write_transactions) == 1, (
        f"the invitations with their emails and batch; the publication writes nothing; opened: {write_transactions}"
    )
    rows = invitation_rows(ctx.db)
    assert [row["recipient"] for row in rows] == COLLEAGUES
    assert len({row["batch_id"] for row in rows}) == 1 and rows[0]["batch_id"] is not None
    assert [row["batch_position"] for row in rows] == list(range(20))
    assert {row["status"] for row in rows} == {ENQUEUED}
    assert email_queue(ctx.redis).count == 1, "one message carries the batch"


def test_a_crash_between_the_write_and_its_publication_leaves_rows_the_relay_publishes_with_their_batch(
    ctx, manager, monkeypatch
):
    class Crash(BaseException):
        """The web process dies after the commit, before it published anything."""

    def crash(*args, **kwargs):
        raise Crash

    monkeypatch.setattr(unit_of_work, "publish_outbox_rows", crash)
    with pytest.raises(Crash):
        operations.invite_colleagues(ctx, manager=manager, addresses=COLLEAGUES[:3], programme="language")
    monkeypatch.undo()
    rows = invitation_rows(ctx.db)
    batch = rows[0]["batch_id"]
    assert batch is not None, "the batch commits with its rows, before any message could reach the queue"
    assert [(row["status"], row["batch_id"], row["batch_position"]) for row in rows] == [
        (ENQUEUED, batch, 0),
        (ENQUEUED, batch, 1),
        (ENQUEUED, batch, 2),
    ]
    assert email_queue(ctx.redis).count == 0
    now = clock.utcnow()
    assert relay_pass(ctx.db, ctx.redis, ctx.settings, families=ctx.families, now=now).published == ()
    later = now + timedelta(seconds=ctx.settings.outbox_republish_after_seconds)
    report = relay_pass(ctx.db, ctx.redis, ctx.settings, families=ctx.families, now=later)
    assert report.queued and set(report.published) == {row["id"] for row in rows}
    assert email_queue(ctx.redis).count == 1, "one message for the batch the write composed"
    assert [(row["status"], row["batch_id"]) for row in invitation_rows(ctx.db)] == [(ENQUEUED, batch)] * 3
    with ctx.db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM email_batches")).scalar() == 1


def test_the_statements_decide_who_is_invited_and_the_rest_still_ride_together(
    ctx, manager, invite, make_user, write_transactions
):
    make_user("employee", email=COLLEAGUES[1], company="Acme Ltd")
    invite([COLLEAGUES[3]])
    write_transactions.clear()
    result = invite(COLLEAGUES[:5])
    assert result.invited == (COLLEAGUES[0], COLLEAGUES[2], COLLEAGUES[4])
    assert result.already_members == (COLLEAGUES[1],) and result.already_invited == (COLLEAGUES[3],)
    assert len(write_transactions) == 1
    latest = [row for row in invitation_rows(ctx.db) if row["recipient"] != COLLEAGUES[3]]
    assert tuple(row["recipient"] for row in latest) == result.invited
    assert len({row["batch_id"] for row in latest}) == 1
    assert [row["batch_position"] for row in latest] == [0, 1, 2], "places among the rows written, none skipped"


def test_a_renewed_invitation_takes_its_key_subject_and_kept_name_from_its_row(ctx, manager, db):
    address = COLLEAGUES[0]
    operations.invite_colleagues(
        ctx, manager=manager, addresses=[address], programme="language", names={address: "Kari Nordmann"}
    )
    with db.read() as conn:
        invitation_id = conn.execute(sa.text("SELECT id FROM invitations WHERE email = :e"), {"e": address}).scalar()
    operations.revoke_invitation(db, company_id=manager.company_id, invitation_id=invitation_id)
    result = operations.invite_colleagues(ctx, manager=manager, addresses=[address], programme="language")
    assert result.invited == (address,)
    first, renewed = invitation_rows(db)
    assert (first["idempotency_key"], renewed["idempotency_key"]) == (
        f"invitation:{invitation_id}:send:1",
        f"invitation:{invitation_id}:send:2",
    )
    assert renewed["subject_ref"] == first["subject_ref"] == f"invitation:{invitation_id}"
    data = json.loads(renewed["template_input"])
    assert data["invitee_name"] == "Kari Nordmann", "the name pasted the first time is kept"
    with db.read() as conn:
        nonce = conn.execute(
            sa.text("SELECT token_nonce FROM invitations WHERE id = :id"), {"id": invitation_id}
        ).scalar()
    assert data["token_nonce"] == nonce != json.loads(first["template_input"])["token_nonce"]
