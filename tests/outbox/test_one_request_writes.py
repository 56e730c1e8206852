"""The engine's writes that go to a libSQL server as one request (Database.write_steps): no answer
comes back between their statements, so what a claim's answer used to decide is in each statement's
own guard. Each test here fails when its guard is taken out (tried by hand), on a file and on sqld."""

from __future__ import annotations

import json
from datetime import timedelta

import sqlalchemy as sa

from portal.core import clock
from portal.outbox import batch_composition
from portal.outbox.batches import claim_batch, seal_batch_request
from portal.outbox.claims import claim_outbox_row
from portal.outbox.freeze import claim_and_freeze, payload_of
from tests.outbox.test_batch_delivery import batch_of, campaign_rows, publish, rows
from tests.outbox.test_engine_rules import render


def batch_state(db, batch_id):
    with db.read() as conn:
        return dict(
            conn.execute(
                sa.text("SELECT provider_key, claim_expires_at, attempt_count FROM email_batches WHERE id = :id"),
                {"id": batch_id},
            )
            .mappings()
            .one()
        )


def composed_batch(ctx, size: int = 3) -> tuple[list[str], str]:
    """`size` campaign rows published together: their IDs, and the batch they were composed into."""
    ids = campaign_rows(ctx, size)
    publish(ctx, ids)
    return ids, batch_of(ctx.db, ids[0])


def test_a_claim_that_loses_the_row_freezes_nothing(ctx, make_outbox_row):
    outbox_id = make_outbox_row()
    now = clock.utcnow()
    # Another delivery holds the row (claimed, nothing frozen yet).
    assert claim_outbox_row(ctx.db, outbox_id, 30, 10, now=now) is not None
    payload = payload_of(outbox_id, render(ctx, outbox_id, "Not ours"), now=now)
    row, message = claim_and_freeze(
        ctx.db, outbox_id, payload, claim_seconds=30, republish_after_seconds=10, max_attempts=4, now=now
    )
    assert row is None and message is None
    with ctx.db.read() as conn:
        stored = conn.execute(
            sa.text("SELECT COUNT(*) FROM email_frozen_payloads WHERE outbox_id = :id"), {"id": outbox_id}
        ).scalar()
    assert stored == 0, "a payload frozen by a delivery that holds no claim would be sent by the one that does"


def test_a_batch_claimed_elsewhere_keeps_its_claim_and_its_members(ctx):
    ids, batch_id = composed_batch(ctx)
    now = clock.utcnow()
    first = claim_batch(ctx.db, batch_id, 30, 10, now=now)
    assert first is not None
    # One member waits again (released on its own), due now, while the first delivery holds the batch.
    with ctx.db.write() as conn:
        conn.execute(
            sa.text("UPDATE email_outbox SET status = 'retry', claim_expires_at = NULL WHERE id = :id"), {"id": ids[1]}
        )
    held = batch_state(ctx.db, batch_id)
    assert claim_batch(ctx.db, batch_id, 30, 10, now=now) is None
    assert batch_state(ctx.db, batch_id) == held, "the batch is still the first delivery's"
    assert rows(ctx.db, ids)[ids[1]]["status"] == "retry", "a delivery without the batch claims none of its members"
    assert seal_batch_request(ctx.db, first, now=now) is not None


def test_a_batch_claimed_again_before_its_seal_keeps_its_key_when_nobody_left(ctx):
    ids, batch_id = composed_batch(ctx)
    composed = batch_state(ctx.db, batch_id)["provider_key"]
    now = clock.utcnow()
    assert claim_batch(ctx.db, batch_id, 30, 10, now=now) is not None
    taken_over = claim_batch(ctx.db, batch_id, 30, 10, now=now + timedelta(seconds=60))
    assert taken_over is not None and taken_over.provider_key == composed
    assert [member.id for member in taken_over.members] == ids


def test_a_seal_by_a_delivery_that_lost_its_claim_logs_and_stamps_nothing(ctx):
    ids, batch_id = composed_batch(ctx)
    now = clock.utcnow()
    stale = claim_batch(ctx.db, batch_id, 30, 10, now=now)
    later = now + timedelta(seconds=60)
    assert claim_batch(ctx.db, batch_id, 30, 10, now=later) is not None  # its claim expired: taken over
    assert seal_batch_request(ctx.db, stale, now=later) is None
    with ctx.db.read() as conn:
        logged = conn.execute(sa.text("SELECT COUNT(*) FROM email_batch_requests")).scalar()
        stamped = conn.execute(
            sa.text("SELECT COUNT(*) FROM email_outbox WHERE batch_id = :b AND first_attempt_at IS NOT NULL"),
            {"b": batch_id},
        ).scalar()
    assert logged == 0, "no request was made: none may be in the batch's log"
    assert stamped == 0, "a first attempt stamped without a request would make the members look maybe-sent"


class _ComposedMeanwhile:
    """The database, with another publication composing some of the same rows between this one's
    read and its write (the relay and a web request publishing the same commit)."""

    def __init__(self, db, others, ctx):
        self.db, self.others, self.ctx = db, others, ctx

    def read_steps(self, steps):
        found = self.db.read_steps(steps)
        batch_composition.messages_to_publish(self.db, self.others, {"campaign"}, 100, now=clock.utcnow())
        return found

    def __getattr__(self, name):
        return getattr(self.db, name)


def test_rows_composed_by_another_publication_meanwhile_join_no_second_batch(ctx):
    ids = campaign_rows(ctx, 4)
    db = _ComposedMeanwhile(ctx.db, ids[2:], ctx)
    carriers = batch_composition.messages_to_publish(db, ids, {"campaign"}, 100, now=clock.utcnow())
    with ctx.db.read() as conn:
        batches = conn.execute(sa.text("SELECT id FROM email_batches")).scalars().all()
        members = conn.execute(
            sa.text("SELECT batch_id, json_group_array(id) FROM email_outbox WHERE batch_id IS NOT NULL GROUP BY 1")
        ).all()
    assert len(batches) == 1, "a batch is written with every row of its group, or not at all"
    assert [sorted(json.loads(ids_of)) for _, ids_of in members] == [sorted(ids[2:])]
    # Every row still has a message: the two left alone carry themselves, the other two their batch.
    assert set(ids[:2]) <= set(carriers) and set(carriers) & set(ids[2:])


def test_a_sealed_batch_taken_over_keeps_every_member_even_one_suppressed_or_asked_to_stop(ctx):
    ids, batch_id = composed_batch(ctx)
    now = clock.utcnow()
    assert seal_batch_request(ctx.db, claim_batch(ctx.db, batch_id, 30, 10, now=now), now=now) is not None
    # After the seal (a request may have reached the provider), one recipient complains and one is
    # asked to stop: the list is frozen, so both follow the provider's answer.
    with ctx.db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO email_suppressions (email, reason, source, created_at) "
                "VALUES ('person1@example.org', 'complained', 'webhook', :now)"
            ),
            {"now": clock.iso(now)},
        )
        conn.execute(
            sa.text("UPDATE email_outbox SET cancel_requested_at = :now, cancel_reason = 'left' WHERE id = :id"),
            {"id": ids[2], "now": clock.iso(now)},
        )
    taken_over = claim_batch(ctx.db, batch_id, 30, 10, now=now + timedelta(seconds=60))
    assert taken_over is not None and [member.id for member in taken_over.members] == ids
    assert {row["status"] for row in rows(ctx.db, ids).values()} == {"processing"}
