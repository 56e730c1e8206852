"""Two engine rules, each held by a test that fails when its line is changed: the first frozen payload
wins (no later freeze replaces it), and a claim taken over after an expired one marks the earlier
attempt's outcome unknown before the next request."""

from __future__ import annotations

import json
from datetime import timedelta

import sqlalchemy as sa

from portal.core import clock
from portal.email_families import FAMILIES
from portal.outbox.ground.queues import build_envelope
from portal.outbox.ground.statuses import DEAD_LETTER, UNKNOWN_OUTCOME
from portal.outbox.send.batch import claim_batch, seal_batch_request
from portal.outbox.send.consumer import handle_message
from portal.outbox.send.freeze import (
    claim_and_freeze,
    freeze_or_replay,
    frozen_messages,
    payload_of,
    validated_by_row,
)
from portal.outbox.write.intents import EmailIntent, add_outbox_rows
from portal.outbox.write.publish import publish_outbox_rows
from tests.outbox.test_batch_delivery import batch_of, campaign_rows, publish

NOTICE = FAMILIES["notice"]
CAMPAIGN = FAMILIES["campaign"]


def render(ctx, outbox_id, subject):
    with ctx.db.read() as conn:
        data = json.loads(
            conn.execute(sa.text("SELECT template_input FROM email_outbox WHERE id = :id"), {"id": outbox_id}).scalar()
        )
    return NOTICE.render({**data, "subject": subject}, ctx.settings, now=clock.utcnow())


def stored_subject(ctx, outbox_id):
    with ctx.db.read() as conn:
        return conn.execute(
            sa.text("SELECT subject FROM email_frozen_payloads WHERE outbox_id = :id"), {"id": outbox_id}
        ).scalar()


def claim(ctx, outbox_id, payload=None, now=None):
    return claim_and_freeze(
        ctx.db,
        outbox_id,
        payload,
        claim_seconds=ctx.settings.outbox_claim_seconds,
        republish_after_seconds=ctx.settings.outbox_republish_after_seconds,
        max_attempts=ctx.settings.outbox_max_attempts,
        now=now or clock.utcnow(),
    )


def expire_claim(ctx, outbox_id):
    with ctx.db.write() as conn:
        conn.execute(
            sa.text("UPDATE email_outbox SET claim_expires_at = :past WHERE id = :id"),
            {"id": outbox_id, "past": clock.iso_in(-1)},
        )


# --- (a) the first frozen payload wins -----------------------------------------------------------


def test_a_later_freeze_of_the_same_row_returns_and_keeps_the_first_payload(ctx, make_outbox_row):
    outbox_id = make_outbox_row()
    now = clock.utcnow()
    row, first = claim(ctx, outbox_id, payload_of(outbox_id, render(ctx, outbox_id, "First render"), now=now), now=now)
    assert row is not None and first.subject == "First render"
    # A re-render (a deploy changed the template, a retry rendered again) tries to freeze its own.
    again = freeze_or_replay(ctx.db, outbox_id, render(ctx, outbox_id, "Second render"), now=now + timedelta(minutes=5))
    assert again.subject == "First render", "what is sent is what was frozen first"
    assert stored_subject(ctx, outbox_id) == "First render"


def test_a_claim_that_brings_a_payload_for_a_frozen_row_sends_the_stored_one(ctx, make_outbox_row):
    outbox_id = make_outbox_row()
    now = clock.utcnow()
    # An earlier attempt froze its payload outside the claim (the path of a row claimed before freezing).
    claim(ctx, outbox_id, now=now)
    assert (
        freeze_or_replay(ctx.db, outbox_id, render(ctx, outbox_id, "Frozen first"), now=now).subject == "Frozen first"
    )
    expire_claim(ctx, outbox_id)
    later = now + timedelta(minutes=1)
    claim(ctx, outbox_id, payload_of(outbox_id, render(ctx, outbox_id, "Rendered later"), now=later), now=later)
    assert stored_subject(ctx, outbox_id) == "Frozen first"


def test_a_batch_freeze_never_replaces_a_member_payload(ctx):
    intents = [
        EmailIntent(
            family=CAMPAIGN,
            recipient=f"person{n}@example.org",
            idempotency_key=f"rules:campaign:{n}",
            data={"campaign_id": 3, "subject": "Stored", "body": "Hello", "user_id": n},
        )
        for n in (1, 2)
    ]
    with ctx.db.write() as conn:
        ids = add_outbox_rows(conn, intents, ctx.settings, now=clock.utcnow())
    publish_outbox_rows(ctx.db, ctx.redis, ids, families=ctx.families, batch_size=100, now=clock.utcnow())
    with ctx.db.read() as conn:
        batch_id = conn.execute(sa.text("SELECT batch_id FROM email_outbox WHERE id = :id"), {"id": ids[0]}).scalar()
    now = clock.utcnow()

    def payload(outbox_id, n, subject):
        data = {"campaign_id": 3, "subject": subject, "body": "Hello", "user_id": n}
        return payload_of(outbox_id, CAMPAIGN.render(data, ctx.settings, now=now), now=now)

    batch = claim_batch(ctx.db, batch_id, 30, 10, now=now)
    batch = seal_batch_request(ctx.db, batch, now=now, payloads=[payload(ids[0], 1, "First")])
    # A later seal of the same list (a 429's retry, a replay) brings payloads of its own.
    batch = seal_batch_request(
        ctx.db, batch, now=now, payloads=[payload(ids[0], 1, "Replay"), payload(ids[1], 2, "Replay")]
    )
    read_back = validated_by_row(batch.frozen)
    assert read_back[ids[0]].subject == "First" and read_back[ids[1]].subject == "Replay"
    assert frozen_messages(ctx.db, ids) == read_back, "what the seal reads back is what is stored, and sent"


def test_a_first_seal_hands_back_exactly_the_rows_it_stored(ctx):
    """A seal that stored every payload it was given does not read them back: what it hands back
    must be the stored rows, column for column."""
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    batch_id = batch_of(ctx.db, ids[0])
    now = clock.utcnow()
    batch = claim_batch(ctx.db, batch_id, 30, 10, now=now)
    data = lambda n: {"campaign_id": 7, "subject": "Winter news", "body": "Hello **everyone**.", "user_id": n}  # noqa: E731
    payloads = [
        payload_of(member.id, CAMPAIGN.render(data(n), ctx.settings, now=now), now=now)
        for n, member in enumerate(batch.members, start=1)
    ]
    sealed = seal_batch_request(ctx.db, batch, now=now, payloads=payloads)
    with ctx.db.read() as conn:
        stored = conn.execute(sa.text("SELECT * FROM email_frozen_payloads")).mappings().all()
    by_id = lambda rows: {row["outbox_id"]: dict(row) for row in rows}  # noqa: E731
    assert by_id(sealed.frozen) == by_id(stored) and len(stored) == 3


# --- (b) a takeover marks the earlier attempt unknown ----------------------------------------


def test_a_claim_taken_over_after_an_expired_attempt_is_never_sent_blind(ctx, make_outbox_row, provider_model):
    """A worker claimed, froze and (perhaps) sent, then died before recording the answer. The next
    claim must treat that attempt as possibly sent: close to the end of the provider's window it may
    not send again, so the row settles as unknown_outcome without a request."""
    outbox_id = make_outbox_row(publish=True)
    now = clock.utcnow()
    row, _ = claim(ctx, outbox_id, payload_of(outbox_id, render(ctx, outbox_id, "Hello"), now=now), now=now)
    assert row is not None
    expire_claim(ctx, outbox_id)
    window = ctx.settings.provider_idempotency_window_seconds - ctx.settings.provider_window_margin_seconds
    late = now + timedelta(seconds=window + 1)
    decision = handle_message(ctx, build_envelope(outbox_id), attempt=2, dead_letter=False, now=late)
    assert decision == "ack:unknown_outcome"
    with ctx.db.read() as conn:
        status, reason, unknown = conn.execute(
            sa.text("SELECT status, last_error, outcome_unknown FROM email_outbox WHERE id = :id"), {"id": outbox_id}
        ).one()
    assert (status, reason, unknown) == (DEAD_LETTER, UNKNOWN_OUTCOME, 1)
    assert provider_model.requests() == []


def test_a_takeover_of_a_claim_that_never_reached_its_first_attempt_is_not_unknown(ctx, make_outbox_row):
    """The other side of the rule: a claim that died before its first attempt (no payload frozen, no
    attempt recorded) leaves nothing that may have gone out."""
    outbox_id = make_outbox_row(publish=True)
    claim(ctx, outbox_id)
    expire_claim(ctx, outbox_id)
    row, _ = claim(ctx, outbox_id)
    assert row is not None and not row.outcome_unknown
