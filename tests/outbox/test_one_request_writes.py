"""The engine's writes that go to a libSQL server as one request (Database.write_steps): no answer
comes back between their statements, so what a claim's answer used to decide is in each statement's
own guard. Each test here fails when its guard is taken out (tried by hand), on a file and on sqld."""

from __future__ import annotations

import json
from datetime import timedelta

import sqlalchemy as sa

from portal.core import clock
from portal.outbox.ground.rows import cancel_unsent
from portal.outbox.send.batch import claim_batch, first_attempt_inputs, seal_batch_request
from portal.outbox.send.claims import claim_outbox_row
from portal.outbox.send.freeze import claim_and_freeze, freeze_steps, payload_of
from portal.outbox.write import composition
from tests.outbox.test_batch_delivery import batch_of, campaign_rows, publish, rows
from tests.outbox.test_engine_rules import CAMPAIGN, render


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


def composed_batch(ctx, size: int = 3, first: int = 1) -> tuple[list[str], str]:
    """`size` campaign rows published together: their IDs, and the batch they were composed into."""
    ids = campaign_rows(ctx, size, first=first)
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
        composition.messages_to_publish(self.db, self.others, {"campaign"}, 100, now=clock.utcnow())
        return found

    def __getattr__(self, name):
        return getattr(self.db, name)


def test_rows_composed_by_another_publication_meanwhile_join_no_second_batch(ctx):
    ids = campaign_rows(ctx, 4)
    db = _ComposedMeanwhile(ctx.db, ids[2:], ctx)
    carriers = composition.messages_to_publish(db, ids, {"campaign"}, 100, now=clock.utcnow())
    with ctx.db.read() as conn:
        batches = conn.execute(sa.text("SELECT id FROM email_batches")).scalars().all()
        members = conn.execute(
            sa.text("SELECT batch_id, json_group_array(id) FROM email_outbox WHERE batch_id IS NOT NULL GROUP BY 1")
        ).all()
    assert len(batches) == 1, "a batch is written with every row of its group, or not at all"
    assert [sorted(json.loads(ids_of)) for _, ids_of in members] == [sorted(ids[2:])]
    # Every row still has a message: the two left alone carry themselves, the other two their batch.
    assert set(ids[:2]) <= set(carriers) and set(carriers) & set(ids[2:])


def test_a_sealed_batch_taken_over_lets_a_member_suppressed_or_asked_to_stop_leave_under_the_same_key(ctx):
    ids, batch_id = composed_batch(ctx)
    now = clock.utcnow()
    sealed = seal_batch_request(ctx.db, claim_batch(ctx.db, batch_id, 30, 10, now=now), now=now)
    assert sealed is not None
    # After the seal (a request may have reached the provider), one recipient complains and one is
    # asked to stop: neither is sent again, and both end as a single email would, for a person.
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
    assert taken_over is not None and [member.id for member in taken_over.members] == [ids[1]]
    assert taken_over.provider_key == sealed.provider_key, "the rest keep the key a request may have used"
    state = rows(ctx.db, ids)
    for left in (ids[0], ids[2]):
        assert (state[left]["status"], state[left]["last_error"], state[left]["batch_id"]) == (
            "dead_letter",
            "unknown_outcome",
            None,
        )
    assert state[ids[1]]["batch_position"] == 0


# --- a batch's first request sealed in its claim's own write --------------------------------------


def rendered_before_the_claim(ctx, batch_id, now):
    """What the delivery renders before a first request's claim: the members' payloads, in order."""
    inputs = first_attempt_inputs(ctx.db, batch_id, now=now)
    rendered = CAMPAIGN.render_many([json.loads(data) for _, data in inputs], ctx.settings, now=now)
    return [payload_of(outbox_id, message, now=now) for (outbox_id, _), message in zip(inputs, rendered, strict=True)]


def stored_payloads(db):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT outbox_id FROM email_frozen_payloads ORDER BY outbox_id")).scalars().all()


def test_a_first_request_is_sealed_in_its_claims_write_with_every_payload_stored(ctx):
    ids, batch_id = composed_batch(ctx)
    now = clock.utcnow()
    payloads = rendered_before_the_claim(ctx, batch_id, now)
    assert [payload["id"] for payload in payloads] == ids
    batch = claim_batch(ctx.db, batch_id, 30, 10, now=now, payloads=payloads, max_attempts=4)
    assert batch.sealed_by_claim and batch.sealed and batch.request_count == 1
    assert stored_payloads(ctx.db) == sorted(ids)
    assert {row["outbox_id"] for row in batch.frozen} == set(ids), "the list is built from what is stored"
    with ctx.db.read() as conn:
        logged = conn.execute(sa.text("SELECT number, size FROM email_batch_requests")).all()
        stamped = conn.execute(
            sa.text("SELECT COUNT(*) FROM email_outbox WHERE first_attempt_at = :now"), {"now": clock.iso(now)}
        ).scalar()
    assert [tuple(row) for row in logged] == [(1, 3)] and stamped == 3
    # A batch sealed once is never rendered before a claim again: its retries send what is stored.
    assert first_attempt_inputs(ctx.db, batch_id, now=now + timedelta(seconds=60)) == []


def test_a_claim_that_loses_the_batch_stores_no_payload(ctx):
    ids, batch_id = composed_batch(ctx)
    now = clock.utcnow()
    payloads = rendered_before_the_claim(ctx, batch_id, now)
    assert claim_batch(ctx.db, batch_id, 30, 10, now=now) is not None  # another delivery, meanwhile
    assert claim_batch(ctx.db, batch_id, 30, 10, now=now, payloads=payloads, max_attempts=4) is None
    assert stored_payloads(ctx.db) == [], (
        "payloads frozen by a delivery without the claim would be sent by the one with it"
    )


def test_a_member_cancelled_before_the_claim_leaves_and_the_rest_is_sealed_under_a_new_key(ctx):
    ids, batch_id = composed_batch(ctx)
    composed = batch_state(ctx.db, batch_id)["provider_key"]
    now = clock.utcnow()
    payloads = rendered_before_the_claim(ctx, batch_id, now)
    with ctx.db.write() as conn:
        cancel_unsent(conn, [ids[1]], "person_deactivated", now=now)
    batch = claim_batch(ctx.db, batch_id, 30, 10, now=now, payloads=payloads, max_attempts=4)
    assert batch.sealed_by_claim and [member.id for member in batch.members] == [ids[0], ids[2]]
    assert batch.provider_key != composed
    assert stored_payloads(ctx.db) == sorted([ids[0], ids[2]])
    assert rows(ctx.db, ids)[ids[1]]["status"] == "cancelled"


def test_a_claim_seals_only_a_whole_list_with_attempts_left(ctx):
    ids, batch_id = composed_batch(ctx)
    now = clock.utcnow()
    payloads = rendered_before_the_claim(ctx, batch_id, now)
    # One payload missing (say it did not render): the claim stores the rest and leaves the seal to the delivery.
    batch = claim_batch(ctx.db, batch_id, 30, 10, now=now, payloads=payloads[:2], max_attempts=4)
    assert batch is not None and not batch.sealed_by_claim and not batch.sealed
    assert stored_payloads(ctx.db) == sorted(ids[:2])
    ids, batch_id = composed_batch(ctx, first=10)
    payloads = rendered_before_the_claim(ctx, batch_id, now)
    batch = claim_batch(ctx.db, batch_id, 30, 10, now=now, payloads=payloads, max_attempts=0)
    assert batch is not None and not batch.sealed_by_claim, "no request beyond the family's attempts"


def test_a_claim_that_finds_a_payload_stored_before_its_own_hands_back_the_stored_one(ctx):
    """A delivery whose claim had expired sealed a member meanwhile: its payload was stored first,
    so it is the one sent, and the claim must hand back what is stored, not what it rendered."""
    ids, batch_id = composed_batch(ctx)
    now = clock.utcnow()
    payloads = rendered_before_the_claim(ctx, batch_id, now)
    earlier = {**payloads[0], "subject": "Stored earlier", "now": clock.iso(now - timedelta(seconds=90))}
    with ctx.db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET status = 'processing' WHERE id = :id"), {"id": ids[0]})
        freeze_steps([earlier])[0][0](conn, freeze_steps([earlier])[0][1])
    batch = claim_batch(ctx.db, batch_id, 30, 10, now=now, payloads=payloads, max_attempts=4)
    assert batch.sealed_by_claim
    with ctx.db.read() as conn:
        stored = conn.execute(sa.text("SELECT * FROM email_frozen_payloads")).mappings().all()
    by_id = lambda rows: {row["outbox_id"]: dict(row) for row in rows}  # noqa: E731
    assert by_id(batch.frozen) == by_id(stored)
    assert by_id(batch.frozen)[ids[0]]["subject"] == "Stored earlier"
