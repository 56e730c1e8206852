"""Batch delivery: many rows in one provider request under one key, with every promise a single
email has (sent exactly once, or unknown_outcome; never a blind resend), through the real consumer,
the real SDK and the provider model over HTTP."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa

from portal.core import clock
from portal.email_families import FAMILIES
from portal.outbox.ground.queues import BULK_EMAIL_QUEUE, queue_named
from portal.outbox.ground.rows import cancel_unsent
from portal.outbox.send.batch import claim_batch, seal_batch_request
from portal.outbox.send.claims import claim_outbox_row
from portal.outbox.send.rate_limit import PAUSE_KEY
from portal.outbox.write.intents import EmailIntent, add_outbox_rows
from portal.outbox.write.publish import publish_outbox_rows

BATCH = "/emails/batch"


def campaign_rows(ctx, count, *, first=1, recipients=None):
    """`count` campaign rows committed together, as a campaign pass writes them; their IDs."""
    intents = [
        EmailIntent(
            family=FAMILIES["campaign"],
            recipient=(recipients or {}).get(n, f"person{n}@example.org"),
            idempotency_key=f"test:campaign:7:user:{n}",
            data={"campaign_id": 7, "subject": "Winter news", "body": "Hello **everyone**.", "user_id": n},
        )
        for n in range(first, first + count)
    ]
    with ctx.db.write() as conn:
        return add_outbox_rows(conn, intents, ctx.settings, now=clock.utcnow())


def publish(ctx, ids, batch_size=100):
    return publish_outbox_rows(ctx.db, ctx.redis, ids, families=ctx.families, batch_size=batch_size, now=clock.utcnow())


def rows(db, ids):
    with db.read() as conn:
        found = conn.execute(
            sa.text(
                "SELECT id, status, last_error, provider_message_id, outcome_unknown, batch_id, batch_position "
                "FROM email_outbox WHERE id IN (SELECT value FROM json_each(:ids))"
            ),
            {"ids": json.dumps(ids)},
        ).mappings()
        return {row["id"]: dict(row) for row in found}


def batch_of(db, outbox_id):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT batch_id FROM email_outbox WHERE id = :id"), {"id": outbox_id}).scalar()


def emails_by_row(model):
    """Every email the provider sent, by the outbox_id tag it carries (a list: a duplicate shows)."""
    found = {}
    for email in model.sent():
        tags = {tag["name"]: tag["value"] for tag in email["tags"]}
        found.setdefault(tags["outbox_id"], []).append(email)
    return found


def batch_requests(model):
    return [entry for entry in model.requests() if entry["path"] == BATCH]


def expire_claims(db):
    """Time passes beyond every claim and retry time (a worker died, or a retry came due)."""
    past = clock.iso_in(-1)
    with db.write() as conn:
        conn.execute(
            sa.text("UPDATE email_outbox SET claim_expires_at = :p WHERE claim_expires_at IS NOT NULL"), {"p": past}
        )
        conn.execute(
            sa.text("UPDATE email_outbox SET next_attempt_at = :p WHERE next_attempt_at IS NOT NULL"), {"p": past}
        )
        conn.execute(
            sa.text("UPDATE email_batches SET claim_expires_at = :p WHERE claim_expires_at IS NOT NULL"), {"p": past}
        )


def test_rows_published_together_ride_in_batches_and_each_gets_the_id_at_its_position(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 250)
    publish(ctx, ids)
    assert queue_named(ctx.redis, BULK_EMAIL_QUEUE).count == 3, "one message per batch: 100, 100 and 50 rows"
    for carrier in (ids[0], ids[100], ids[200]):
        assert deliver(carrier) == "ack:sent"

    requests = batch_requests(provider_model)
    assert [len(json.loads(r["body"])) for r in requests] == [100, 100, 50]
    assert len({r["idempotency_key"] for r in requests}) == 3
    sent = emails_by_row(provider_model)
    assert sorted(sent) == sorted(ids) and all(len(emails) == 1 for emails in sent.values())
    state = rows(ctx.db, ids)
    assert all(state[i]["status"] == "sent" for i in ids)
    # The answer's IDs map back by position: each row holds the ID of the email with its own tag.
    assert all(state[i]["provider_message_id"] == sent[i][0]["id"] for i in ids)
    assert all(sent[i][0]["to"] == [f"person{n}@example.org"] for n, i in enumerate(ids, start=1))


def test_a_lone_row_and_an_unbatchable_family_are_sent_alone(ctx, provider_model, deliver, make_outbox_row):
    (lone,) = campaign_rows(ctx, 1)
    notices = [make_outbox_row(family="notice") for _ in range(3)]
    publish(ctx, [lone, *notices])
    assert all(batch_of(ctx.db, i) is None for i in [lone, *notices])
    assert deliver(lone) == "ack:sent"
    assert batch_requests(provider_model) == []


def test_a_retry_after_a_lost_answer_sends_the_same_bytes_under_the_same_key_and_nobody_twice(
    ctx, provider_model, deliver
):
    ids = campaign_rows(ctx, 5)
    publish(ctx, ids)
    provider_model.fail_next("drop_after_accept", path=BATCH)
    assert deliver(ids[0]).startswith("retry:")
    assert {row["outcome_unknown"] for row in rows(ctx.db, ids).values()} == {1}, "the list may have gone out"

    expire_claims(ctx.db)
    assert deliver(ids[0], attempt=2) == "ack:sent"
    first, retry = batch_requests(provider_model)
    assert retry["body"] == first["body"], "byte for byte: the provider replays instead of refusing a new body"
    assert retry["idempotency_key"] == first["idempotency_key"]
    assert retry["outcome"] == "replayed"
    assert all(len(emails) == 1 for emails in emails_by_row(provider_model).values())
    assert len(provider_model.sent()) == 5
    assert {row["status"] for row in rows(ctx.db, ids).values()} == {"sent"}


def test_a_retry_after_a_500_renders_nothing_again(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    provider_model.fail_next("http_500", path=BATCH)
    assert deliver(ids[0]).startswith("retry:provider_error")
    expire_claims(ctx.db)
    # The render states when it was prepared: a new render a second later would differ.
    later = clock.utcnow() + timedelta(minutes=1)
    assert deliver(ids[0], attempt=2, now=later) == "ack:sent"
    first, retry = batch_requests(provider_model)
    assert retry["body"] == first["body"] and retry["idempotency_key"] == first["idempotency_key"]
    assert len(provider_model.sent()) == 3


def test_a_429_is_retried_under_the_same_key_and_counts_as_one_request(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 4)
    publish(ctx, ids)
    provider_model.fail_next("http_429", path=BATCH, retry_after=0)
    assert deliver(ids[0]).startswith("retry:rate_limited")
    assert all(row["outcome_unknown"] == 0 for row in rows(ctx.db, ids).values()), "a 429 is a definite refusal"
    expire_claims(ctx.db)
    assert ctx.redis.pttl(PAUSE_KEY) > 0, "the 429 pauses every worker"
    ctx.redis.delete(PAUSE_KEY)  # its time passes
    assert deliver(ids[0], attempt=2) == "ack:sent"
    refused, accepted = batch_requests(provider_model)
    assert refused["status"] == 429 and accepted["status"] == 200
    assert refused["body"] == accepted["body"] and refused["idempotency_key"] == accepted["idempotency_key"]
    assert len(provider_model.sent()) == 4


def test_a_batch_taken_over_after_its_seal_is_unknown_for_every_member(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    batch_id = batch_of(ctx.db, ids[0])
    now = clock.utcnow()
    # A delivery claims and seals, and dies before (or during) its request.
    claimed = claim_batch(ctx.db, batch_id, 3, 1, now=now)
    assert seal_batch_request(ctx.db, claimed, now=now) is not None
    later = now + timedelta(seconds=10)
    taken_over = claim_batch(ctx.db, batch_id, 3, 1, now=later)
    assert taken_over is not None and all(member.outcome_unknown for member in taken_over.members)
    assert {row["outcome_unknown"] for row in rows(ctx.db, ids).values()} == {1}


def test_a_batch_taken_over_before_its_seal_is_not_unknown(ctx, provider_model):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    batch_id = batch_of(ctx.db, ids[0])
    now = clock.utcnow()
    assert claim_batch(ctx.db, batch_id, 3, 1, now=now) is not None
    taken_over = claim_batch(ctx.db, batch_id, 3, 1, now=now + timedelta(seconds=10))
    assert taken_over is not None and not any(member.outcome_unknown for member in taken_over.members)


def take_over_before_the_next_read(db, batch_id, *, at):
    """Another delivery takes the batch over (its claim at `at`) just before `db`'s next read.
    Returns a list that then holds what that takeover claimed."""
    taken = []

    def read_after_a_takeover(steps):
        del db.read_steps  # once
        taken.append(claim_batch(db, batch_id, 3, 1, now=at))
        return db.read_steps(steps)

    db.read_steps = read_after_a_takeover
    return taken


@pytest.mark.file_only("on a server the read goes inside the write's own request: nothing lands in between")
def test_a_claim_or_seal_taken_over_before_its_read_back_hands_back_nothing(ctx, provider_model):
    """On a local file a claim's and a seal's batch is read after their write commits (other
    writers need not wait for the read). A takeover landing in between (the process stalled past
    its claim) must not give this delivery the other one's claim."""
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    batch_id = batch_of(ctx.db, ids[0])
    now = clock.utcnow()

    taken = take_over_before_the_next_read(ctx.db, batch_id, at=now + timedelta(seconds=10))
    assert claim_batch(ctx.db, batch_id, 3, 1, now=now) is None
    assert taken[0] is not None, "the other delivery took the batch"

    later = now + timedelta(seconds=30)
    claimed = claim_batch(ctx.db, batch_id, 3, 1, now=later)
    taken = take_over_before_the_next_read(ctx.db, batch_id, at=later + timedelta(seconds=10))
    assert seal_batch_request(ctx.db, claimed, now=later) is None
    assert taken[0] is not None
    assert provider_model.sent() == []


def test_a_sealed_batch_whose_window_is_closing_settles_unknown_without_a_request(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    provider_model.fail_next("drop_after_accept", path=BATCH)
    deliver(ids[0])
    expire_claims(ctx.db)
    window = ctx.settings.provider_idempotency_window_seconds
    assert deliver(ids[0], attempt=2, now=clock.utcnow() + timedelta(seconds=window)) == "ack:unknown_outcome"
    assert len(batch_requests(provider_model)) == 1, "no request once the provider may have forgotten the key"
    with ctx.db.read() as conn:
        logged = conn.execute(sa.text("SELECT COUNT(*) FROM email_batch_requests")).scalar()
    assert logged == 1, "the request sealed but never made is not in the batch's log"
    assert {(r["status"], r["last_error"]) for r in rows(ctx.db, ids).values()} == {("dead_letter", "unknown_outcome")}


def test_a_row_cancelled_before_the_first_request_leaves_and_the_key_changes(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 4)
    publish(ctx, ids)
    batch_id = batch_of(ctx.db, ids[0])
    with ctx.db.read() as conn:
        composed_key = conn.execute(
            sa.text("SELECT provider_key FROM email_batches WHERE id = :id"), {"id": batch_id}
        ).scalar()
    with ctx.db.write() as conn:
        assert cancel_unsent(conn, [ids[0]], "left_the_company", now=clock.utcnow()) == [ids[0]]
    assert deliver(ids[0]) == "ack:sent", "the carrier's message still carries the batch"
    (request,) = batch_requests(provider_model)
    assert request["idempotency_key"] != composed_key
    assert request["idempotency_key"].endswith(":2") and composed_key.endswith(":1")
    assert sorted(emails_by_row(provider_model)) == sorted(ids[1:])
    state = rows(ctx.db, ids)
    assert state[ids[0]]["status"] == "cancelled" and state[ids[0]]["batch_id"] is None
    assert [state[i]["batch_position"] for i in ids[1:]] == [0, 1, 2]


def test_a_row_suppressed_before_the_first_request_leaves_and_is_never_sent(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    with ctx.db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO email_suppressions (email, reason, source, created_at) "
                "VALUES ('person2@example.org', 'complained', 'webhook', :now)"
            ),
            {"now": clock.iso(clock.utcnow())},
        )
    assert deliver(ids[0]) == "ack:sent"
    assert sorted(emails_by_row(provider_model)) == sorted([ids[0], ids[2]])
    assert rows(ctx.db, ids)[ids[1]]["status"] == "suppressed"


def test_after_the_seal_a_row_follows_the_batch_and_cannot_be_cancelled(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    provider_model.fail_next("drop_after_accept", path=BATCH)
    deliver(ids[0])
    with ctx.db.write() as conn:
        assert cancel_unsent(conn, ids, "campaign_cancelled", now=clock.utcnow()) == []
    expire_claims(ctx.db)
    assert deliver(ids[0], attempt=2) == "ack:sent"
    first, retry = batch_requests(provider_model)
    assert retry["body"] == first["body"]


def test_a_member_of_an_open_batch_is_never_claimed_alone(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    assert claim_outbox_row(ctx.db, ids[1], 3, 1, now=clock.utcnow()) is None
    # Its own message (the relay's, say) is routed to the batch.
    assert deliver(ids[1]) == "ack:sent"
    assert len(batch_requests(provider_model)) == 1 and len(provider_model.sent()) == 3


def test_a_batch_refused_as_a_whole_goes_on_alone_and_only_the_bad_row_fails(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 3, recipients={2: "not-an-address"})
    publish(ctx, ids)
    assert deliver(ids[0]) == "ack:batch_dissolved"
    assert len(provider_model.sent()) == 0, "strict: nothing of the list was sent"
    assert all(batch_of(ctx.db, i) is None for i in ids)
    for outbox_id in ids:
        deliver(outbox_id)
    state = rows(ctx.db, ids)
    assert [state[i]["status"] for i in ids] == ["sent", "failed", "sent"]
    assert sorted(emails_by_row(provider_model)) == sorted([ids[0], ids[2]])


def test_a_sealed_members_payload_outlives_its_own_settlement_until_the_batch_settles(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    provider_model.fail_next("drop_after_accept", path=BATCH)
    deliver(ids[0])
    (request,) = batch_requests(provider_model)
    # A receipt settles one member alone (found by its outbox_id tag) before the batch's retry.
    from portal.outbox.ground.rows import settle_from_receipt_tag

    with ctx.db.write() as conn:
        settle_from_receipt_tag(
            conn,
            {
                "event_id": "evt_1",
                "email_id": request["message_ids"][1] if request["message_ids"] else "re_x",
                "event_at": clock.iso(clock.utcnow()),
                "now": clock.iso(clock.utcnow()),
            },
            ids[1],
            "delivered",
        )
    expire_claims(ctx.db)
    assert deliver(ids[0], attempt=2) == "ack:sent"
    first, retry = batch_requests(provider_model)
    assert retry["body"] == first["body"], "the settled member's payload was kept for the retry"
    with ctx.db.read() as conn:
        left = conn.execute(sa.text("SELECT COUNT(*) FROM email_frozen_payloads")).scalar()
    assert left == 0, "the settled batch's payloads go with it"


def test_every_request_of_a_batch_is_logged_with_its_answer(ctx, provider_model, deliver, make_due):
    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    provider_model.fail_next("http_429", path=BATCH, retry_after=0)
    assert deliver(ids[0]).startswith("retry:rate_limited")
    for outbox_id in ids:
        make_due(outbox_id)
    assert deliver(ids[0], attempt=2) == "ack:sent"
    with ctx.db.read() as conn:
        logged = [tuple(row) for row in conn.execute(sa.text("SELECT number, answer FROM email_batch_requests"))]
    assert logged == [(1, "429: rate_limited: rate_limit_exceeded"), (2, "accepted")]


def test_a_member_that_does_not_render_goes_alone_and_the_rest_get_their_own_links(ctx, provider_model, deliver):
    ids = campaign_rows(ctx, 5)
    publish(ctx, ids)
    with ctx.db.write() as conn:  # a stored input this release cannot render
        conn.execute(
            sa.text("UPDATE email_outbox SET template_input = json_remove(template_input, '$.user_id') WHERE id = :id"),
            {"id": ids[2]},
        )
    assert deliver(ids[0]) == "ack:sent"

    (request,) = batch_requests(provider_model)
    assert len(json.loads(request["body"])) == 4
    state = rows(ctx.db, ids)
    assert state[ids[2]]["batch_id"] is None and state[ids[2]]["status"] != "sent"
    sent = emails_by_row(provider_model)
    assert sorted(sent) == sorted(i for i in ids if i != ids[2])
    # One render of the bodies, each member's own unsubscribe link in it.
    links = {i: sent[i][0]["headers"]["List-Unsubscribe"].strip("<>") for i in sent}
    assert len(set(links.values())) == 4
    assert all(links[i] in sent[i][0]["text"] and links[i] in sent[i][0]["html"] for i in sent)
