"""The defects a line-by-line review found (issue 9), each shown through the engine's real parts:
a libSQL file, the consumer, and the provider model over HTTP. Each test failed before its fix."""

import json
import threading
from datetime import timedelta

import sqlalchemy as sa

from devtools.testing import wait_until
from portal.core import clock
from portal.outbox.ground.queues import build_envelope
from portal.outbox.ground.statuses import (
    DEAD_LETTER,
    DELIVERED,
    DELIVERY_EXHAUSTED,
    FAILED,
    RETRY,
    SENT,
    UNKNOWN_OUTCOME,
)
from portal.outbox.operate.actions import eligible_actions
from portal.outbox.send.claims import claim_outbox_row
from portal.outbox.send.consumer import handle_message
from portal.outbox.write.publish import publish_outbox_rows
from portal.outbox.write.relay import RELAY_QUERY, relay_pass


def deliver(ctx, outbox_id, attempt=1, now=None):
    return handle_message(ctx, build_envelope(outbox_id), attempt=attempt, dead_letter=False, now=now or clock.utcnow())


def set_columns(ctx, outbox_id, **columns):
    with ctx.db.write() as conn:
        assignments = ", ".join(f"{name} = :{name}" for name in columns)
        conn.execute(sa.text(f"UPDATE email_outbox SET {assignments} WHERE id = :id"), {**columns, "id": outbox_id})


# --- 1. a frozen payload is replayed without rendering ------------------------------------------


def test_frozen_first_attempt_is_sent_even_when_its_input_no_longer_renders(
    ctx, make_outbox_row, outbox_row, provider_model, make_due
):
    outbox_id = make_outbox_row()
    provider_model.fail_next("drop_after_accept")
    assert deliver(ctx, outbox_id) == "retry:transport_failure"
    # A deploy adds a required template variable: the stored input cannot be rendered any more.
    set_columns(ctx, outbox_id, template_input="{}")
    make_due(outbox_id)

    assert deliver(ctx, outbox_id, attempt=2) == "ack:sent"
    first, second = provider_model.requests()
    assert second["outcome"] == "replayed" and first["fingerprint"] == second["fingerprint"]
    assert outbox_row(outbox_id)["status"] == SENT and len(provider_model.sent()) == 1


# --- 2. settles are the claim holder's; dead letters never over a live claim ---------------------


def test_a_stale_holders_settle_does_not_override_anothers_live_claim(ctx, make_outbox_row, outbox_row, provider_model):
    ctx.settings = ctx.settings.with_overrides(email_from="not an address")  # the provider will refuse it
    outbox_id = make_outbox_row()
    provider_model.fail_next("slow_accept", delay=1.5)
    first = threading.Thread(target=deliver, args=(ctx, outbox_id))
    first.start()
    assert wait_until(provider_model.requests, timeout=10, interval=0.02)
    # The first holder stalls (a paused VM, a long GC) until its claim expires; another claims the row.
    set_columns(ctx, outbox_id, claim_expires_at=clock.iso_in(-1))
    second = claim_outbox_row(ctx.db, outbox_id, claim_seconds=60, now=clock.utcnow())
    assert second is not None
    first.join()

    row = outbox_row(outbox_id)
    assert (row["status"], row["attempt_count"]) == ("processing", second.attempt_count), (
        "the stale holder's 'failed' must not land on a row another delivery holds"
    )


def test_the_dead_letter_queue_leaves_a_row_in_flight_alone(ctx, make_outbox_row, outbox_row, count):
    outbox_id = make_outbox_row(publish=True)
    row = claim_outbox_row(ctx.db, outbox_id, claim_seconds=60, now=clock.utcnow())
    set_columns(ctx, outbox_id, first_attempt_at=clock.now_iso())  # its request is at the provider
    assert handle_message(ctx, build_envelope(outbox_id), attempt=0, dead_letter=True, now=clock.utcnow()).startswith(
        "ack:"
    )
    after = outbox_row(outbox_id)
    assert (after["status"], after["attempt_count"]) == ("processing", row.attempt_count)


def test_the_dead_letter_queue_treats_an_attempt_in_flight_as_unknown(ctx, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(publish=True)
    claim_outbox_row(ctx.db, outbox_id, claim_seconds=60, now=clock.utcnow())
    # The worker died mid-send: its claim expired with a request at the provider.
    set_columns(ctx, outbox_id, first_attempt_at=clock.now_iso(), claim_expires_at=clock.iso_in(-1))
    assert (
        handle_message(ctx, build_envelope(outbox_id), attempt=0, dead_letter=True, now=clock.utcnow())
        == "ack:dead_letter"
    )
    row = outbox_row(outbox_id)
    assert (row["status"], row["last_error"], row["outcome_unknown"]) == (DEAD_LETTER, UNKNOWN_OUTCOME, 1)
    assert eligible_actions(row) == ["confirm_sent", "send_again"]  # never "retry"


def test_a_receipt_proving_delivery_wins_over_a_dead_letter(ctx, make_outbox_row, outbox_row):
    from portal.outbox.hear.receipts import apply_receipt_event
    from tests.builders import event

    outbox_id = make_outbox_row(status=DEAD_LETTER, provider_message_id=None, last_error=DELIVERY_EXHAUSTED)
    body = json.dumps(event("email.delivered", email_id="re_late", outbox_id=outbox_id)).encode()
    assert apply_receipt_event(ctx.db, "msg_late", body, environment="development", now=clock.utcnow()) == "applied"
    row = outbox_row(outbox_id)
    assert (row["status"], row["provider_message_id"], row["last_error"]) == (DELIVERED, "re_late", None)


# --- 4. a row is claimable only when it is due ----------------------------------------------------


def test_a_late_publish_and_an_early_message_do_not_skip_the_retry_delay(
    ctx, make_outbox_row, outbox_row, provider_model
):
    outbox_id = make_outbox_row()
    provider_model.fail_next("http_429", retry_after=60)
    assert deliver(ctx, outbox_id).startswith("retry:rate_limited")
    # The request's own publication lands late, then a copy of the message arrives early.
    publish_outbox_rows(ctx.db, ctx.redis, [outbox_id], now=clock.utcnow())
    assert outbox_row(outbox_id)["status"] == RETRY
    ctx.redis.delete("rq:scheduled:email")  # only the early copy's reschedule is of interest below
    assert deliver(ctx, outbox_id, attempt=2) == "retry:not_yet_due"
    assert len(provider_model.requests()) == 1, "the provider's retry-after stands"
    # The early copy is not lost: it comes back no sooner than the row's retry time.
    ((_, comes_back_at),) = ctx.redis.zrange("rq:scheduled:email", 0, -1, withscores=True)
    assert comes_back_at >= clock.parse(outbox_row(outbox_id)["next_attempt_at"]).timestamp()


# --- 5. an exception before the provider call releases the claim ----------------------------------


def test_an_exception_before_the_send_releases_the_claim(ctx, make_outbox_row, outbox_row, provider_model, make_due):
    outbox_id = make_outbox_row(data={"body": "no subject: the notice template cannot render"})
    assert deliver(ctx, outbox_id).startswith("retry:")
    row = outbox_row(outbox_id)
    assert (row["status"], row["claim_expires_at"]) == (RETRY, None)
    assert row["outcome_unknown"] == 0 and provider_model.requests() == []
    # When the retry comes, the row is there to claim (not held for the rest of a claim period).
    set_columns(ctx, outbox_id, template_input=json.dumps({"subject": "Hello", "body": "Fixed."}))
    make_due(outbox_id)
    assert deliver(ctx, outbox_id, attempt=2) == "ack:sent"


# --- 6. the provider's window, checked before the call, with a margin -----------------------------


def test_unknown_outcome_near_the_end_of_the_window_is_not_sent_blind(ctx, make_outbox_row, outbox_row, provider_model):
    outbox_id = make_outbox_row()
    provider_model.fail_next("http_500")
    first_attempt = clock.utcnow()
    assert deliver(ctx, outbox_id, now=first_attempt).startswith("retry:")
    window = ctx.settings.provider_idempotency_window_seconds
    # Five minutes left in the provider's window: less than the margin (10 minutes by default).
    near_its_end = first_attempt + timedelta(seconds=window - 300)
    assert deliver(ctx, outbox_id, attempt=2, now=near_its_end) == "ack:unknown_outcome"
    row = outbox_row(outbox_id)
    assert (row["status"], row["last_error"]) == (DEAD_LETTER, UNKNOWN_OUTCOME)
    assert len(provider_model.requests()) == 1


# --- 7 and 8. the relay uses an index, and republishes each lost message once per stale period -----


def test_relay_and_claim_queries_use_an_index(ctx):
    with ctx.db.read() as conn:
        relay_plan = " ".join(
            str(row[-1])
            for row in conn.execute(
                sa.text(f"EXPLAIN QUERY PLAN {RELAY_QUERY.text}"), {"stale": clock.now_iso(), "limit": 500}
            )
        )
        claim_plan = " ".join(
            str(row[-1])
            for row in conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN UPDATE email_outbox SET status = 'processing' WHERE id = 'x' "
                "AND provider_message_id IS NULL"
            )
        )
    assert "SCAN email_outbox" not in relay_plan and "USING INDEX email_outbox_relay" in relay_plan, relay_plan
    assert "TEMP B-TREE" not in relay_plan, relay_plan
    assert "SCAN" not in claim_plan, claim_plan


def test_the_relay_republishes_a_lost_message_once_per_stale_period(ctx, make_outbox_row, outbox_row):
    stuck = make_outbox_row(publish=True)
    start = clock.utcnow()
    claim_outbox_row(ctx.db, stuck, claim_seconds=1, republish_after_seconds=1, now=start)
    assert relay_pass(ctx.db, ctx.redis, ctx.settings, now=start + timedelta(seconds=0.9)).published == (), (
        "not while the claim lasts"
    )
    died = start + timedelta(seconds=1.1)  # the worker died; its claim has expired
    assert relay_pass(ctx.db, ctx.redis, ctx.settings, now=died).published == (stuck,)
    assert relay_pass(ctx.db, ctx.redis, ctx.settings, now=died + timedelta(seconds=0.5)).published == (), (
        "no duplicate job on the next pass"
    )
    stale_period_later = died + timedelta(seconds=ctx.settings.outbox_republish_after_seconds + 0.1)
    assert relay_pass(ctx.db, ctx.redis, ctx.settings, now=stale_period_later).published == (stuck,), (
        "but again after a stale period"
    )


# --- 3. keys are namespaced by environment and install --------------------------------------------


def test_idempotency_keys_carry_the_environment_and_the_install(ctx, make_outbox_row, outbox_row, provider_model):
    with ctx.db.read() as conn:
        install_id = conn.execute(sa.text("SELECT install_id FROM portal_install")).scalar_one()
    outbox_id = make_outbox_row(key="invitation:1:send:1")
    assert deliver(ctx, outbox_id) == "ack:sent"
    assert provider_model.requests()[0]["idempotency_key"] == f"development:{install_id}:{outbox_id}"


def test_a_restored_database_never_meets_the_keys_its_lost_rows_sent(ctx, make_outbox_row, provider_model, count):
    """A backup restored: rows written after it are gone (their emails went out), and the domain
    hands their local IDs out again, so a new invitation has a lost one's key (invitation:1:send:1)."""
    lost = make_outbox_row(key="invitation:1:send:1", recipient="before@example.org")
    assert deliver(ctx, lost) == "ack:sent"
    with ctx.db.write() as conn:  # what the restore takes away: the row, not the install ID
        conn.execute(sa.text("DELETE FROM email_outbox WHERE id = :id"), {"id": lost})
    again = make_outbox_row(key="invitation:1:send:1", recipient="after@example.org")
    assert deliver(ctx, again) == "ack:sent", "not a 409 and an unknown outcome for an email never sent"
    assert [m["to"] for m in provider_model.sent()] == [["before@example.org"], ["after@example.org"]]


def test_a_reset_database_never_meets_the_keys_of_the_old_one(
    ctx, settings, make_outbox_row, provider_model, migrated_template, tmp_path
):
    from portal.context import build_context
    from portal.core import schema
    from portal.core.db import Database

    first = make_outbox_row(key="invitation:1:send:1")
    assert deliver(ctx, first) == "ack:sent"
    # Another database (a reset, or staging) on the same provider account reuses the local ID 1.
    other_path = tmp_path / "reset.db"
    reset = Database(f"sqlite+libsql:///{other_path}")
    schema.upgrade(reset)
    reset.dispose()
    other = build_context(settings.with_overrides(database_url=f"sqlite+libsql:///{other_path}"))
    try:
        from portal.email_families import FAMILIES
        from portal.outbox import EmailIntent
        from portal.outbox.write.intents import add_outbox_rows

        intent = EmailIntent(FAMILIES["notice"], "x@example.org", "invitation:1:send:1", {"subject": "S", "body": "B"})
        with other.db.write() as conn:
            (second,) = add_outbox_rows(conn, [intent], other.settings, now=clock.utcnow())
        assert deliver(other, second) == "ack:sent"
    finally:
        other.db.dispose()
    assert len(provider_model.sent()) == 2, "the second database's email went out, not into unknown_outcome"


# --- 11. a family a newer deploy added is retried, not failed ------------------------------------


def test_an_unknown_but_well_formed_family_prefix_is_retried_for_a_grace_period(ctx, make_outbox_row, outbox_row):
    new_family_id = make_outbox_row(status="enqueued", provider_message_id=None, id="rpt_" + "0" * 32)
    assert deliver(ctx, new_family_id).startswith("retry:unknown_family")
    assert outbox_row(new_family_id)["status"] == "enqueued"
    assert ctx.redis.zcard("rq:scheduled:email") == 1
    # Past the grace period it is failed as before.
    set_columns(ctx, new_family_id, created_at=clock.iso_in(-7200))
    assert deliver(ctx, new_family_id) == "ack:outbox_id_unclaimed"
    assert outbox_row(new_family_id)["status"] == FAILED


def test_migration_0019_marks_the_unknown_outcomes_settled_before_the_flag_was_set(ctx, make_outbox_row, outbox_row):
    from portal.core.schema import MIGRATIONS_DIR

    unmarked = make_outbox_row(
        status=DEAD_LETTER, last_error=UNKNOWN_OUTCOME, outcome_unknown=0, provider_message_id=None
    )
    exhausted = make_outbox_row(
        status=DEAD_LETTER, last_error=DELIVERY_EXHAUSTED, outcome_unknown=0, provider_message_id=None
    )
    with ctx.db.write() as conn:
        conn.exec_driver_sql((MIGRATIONS_DIR / "0019_unknown_outcome_flag.sql").read_text())
    assert eligible_actions(outbox_row(unmarked)) == ["confirm_sent", "send_again"]
    assert eligible_actions(outbox_row(exhausted)) == ["retry"]  # nothing can have gone out: unchanged
