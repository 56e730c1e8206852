"""One delivery at a time through the real consumer, a real libSQL file and the provider model over HTTP."""

from datetime import timedelta

import sqlalchemy as sa

from devtools.testing import wait_until
from portal.core import clock
from portal.outbox.ground import rendering
from portal.outbox.ground.queues import build_envelope
from portal.outbox.ground.statuses import DEAD_LETTER, FAILED, RETRY, SENT, SUPPRESSED, UNKNOWN_OUTCOME
from portal.outbox.operate.actions import eligible_actions
from portal.outbox.send.consumer import handle_message


def deliver(ctx, outbox_id, attempt=1, now=None):
    return handle_message(ctx, build_envelope(outbox_id), attempt=attempt, dead_letter=False, now=now or clock.utcnow())


def test_delivery_sends_once_with_tags_and_settles(ctx, make_outbox_row, outbox_row, provider_model, count):
    outbox_id = make_outbox_row(recipient="ada@example.org", publish=True)
    assert deliver(ctx, outbox_id) == "ack:sent"

    row = outbox_row(outbox_id)
    assert row["status"] == SENT and row["attempt_count"] == 1
    (email,) = provider_model.sent()
    assert row["provider_message_id"] == email["id"]
    assert email["to"] == ["ada@example.org"] and email["idempotency_key"].endswith(":" + outbox_id)
    tags = {t["name"]: t["value"] for t in email["tags"]}
    assert tags["environment"] == "development" and tags["family"] == "notice" and tags["outbox_id"] == outbox_id
    assert count("email_frozen_payloads") == 0, "the frozen payload is personal content: gone once the row settles"

    # A duplicate delivery of a settled row reads the row and does nothing.
    assert deliver(ctx, outbox_id) == "ack:not_claimable"
    assert len(provider_model.sent()) == 1


def test_lost_response_then_layout_change_replays_the_frozen_payload(
    ctx, make_outbox_row, outbox_row, provider_model, make_due, monkeypatch
):
    outbox_id = make_outbox_row()
    provider_model.fail_next("drop_after_accept")
    assert deliver(ctx, outbox_id) == "retry:transport_failure"
    assert outbox_row(outbox_id)["status"] == RETRY

    # A deploy changes the shared layout before the retry.
    original = rendering.render_bodies
    monkeypatch.setattr(
        rendering,
        "render_bodies",
        lambda template, context: tuple(b.replace("TEEI", "NEW-LAYOUT") for b in original(template, context)),
    )
    monkeypatch.setattr("portal.outbox.ground.families.render_bodies", rendering.render_bodies)
    make_due(outbox_id)
    assert deliver(ctx, outbox_id, attempt=2) == "ack:sent"

    first, second = provider_model.requests()
    assert first["fingerprint"] == second["fingerprint"], "the retry must carry the same final HTTP body"
    assert second["outcome"] == "replayed"
    (email,) = provider_model.sent()
    assert "NEW-LAYOUT" not in email["html"]
    assert outbox_row(outbox_id)["provider_message_id"] == first["message_id"] == email["id"]


def test_acceptance_write_failure_is_reconciled_by_another_attempt(ctx, make_outbox_row, outbox_row, provider_model):
    outbox_id = make_outbox_row()
    with ctx.db.write() as conn:
        conn.exec_driver_sql(
            "CREATE TRIGGER refuse_sent BEFORE UPDATE OF status ON email_outbox WHEN NEW.status = 'sent' "
            "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        )
    start = clock.utcnow()
    assert deliver(ctx, outbox_id, now=start).startswith("retry:")
    assert len(provider_model.sent()) == 1 and outbox_row(outbox_id)["provider_message_id"] is None

    with ctx.db.write() as conn:
        conn.exec_driver_sql("DROP TRIGGER refuse_sent")
    # The row is still claimed by the attempt that failed; once the claim expires another may try.
    claim = timedelta(seconds=ctx.settings.outbox_claim_seconds)
    assert deliver(ctx, outbox_id, attempt=2, now=start + claim - timedelta(seconds=1)) == "ack:not_claimable"
    assert deliver(ctx, outbox_id, attempt=2, now=start + claim + timedelta(seconds=0.2)) == "ack:sent"
    row = outbox_row(outbox_id)
    assert row["status"] == SENT
    assert row["provider_message_id"] == provider_model.sent()[0]["id"]
    assert len(provider_model.sent()) == 1
    assert provider_model.requests()[-1]["outcome"] == "replayed"


def test_claim_write_failure_retries_and_the_row_stays_eligible(ctx, make_outbox_row, outbox_row, provider_model):
    outbox_id = make_outbox_row(publish=True)
    with ctx.db.write() as conn:
        conn.exec_driver_sql(
            "CREATE TRIGGER refuse_claim BEFORE UPDATE OF status ON email_outbox WHEN NEW.status = 'processing' "
            "BEGIN SELECT RAISE(ABORT, 'locked'); END"
        )
    assert deliver(ctx, outbox_id).startswith("retry:")
    assert outbox_row(outbox_id)["status"] == "enqueued"
    assert provider_model.requests() == []
    scheduled = ctx.redis.zrange("rq:scheduled:email", 0, -1)
    assert scheduled, "the message must come back later, not be acknowledged away"


def test_conflicting_payload_becomes_unknown_outcome(ctx, make_outbox_row, outbox_row, provider_model, count):
    import resend

    outbox_id = make_outbox_row(recipient="grace@example.org")
    with ctx.db.read() as conn:
        install_id = conn.execute(sa.text("SELECT install_id FROM portal_install")).scalar_one()
    key = f"development:{install_id}:{outbox_id}"  # as the engine sends it
    # An earlier attempt (say, before freezing existed) used the key with other content.
    resend.api_key, resend.api_url = "re_test", provider_model.url
    resend.Emails.send(
        {"from": "Portal <portal@localhost>", "to": ["grace@example.org"], "subject": "old", "text": "old body"},
        {"idempotency_key": key},
    )

    assert deliver(ctx, outbox_id) == "ack:unknown_outcome"
    row = outbox_row(outbox_id)
    assert row["status"] == DEAD_LETTER and row["last_error"] == UNKNOWN_OUTCOME
    # Marked as such: the console offers a person "confirm sent" or "send again", never "retry" (the
    # same key again, which after the provider's window would send blind).
    assert row["outcome_unknown"] == 1 and eligible_actions(row) == ["confirm_sent", "send_again"]
    assert len(provider_model.sent()) == 1
    assert count("email_frozen_payloads") == 0


def test_validation_rejection_is_final_failure(ctx, make_outbox_row, outbox_row, provider_model):
    ctx.settings = ctx.settings.with_overrides(email_from="not an address")
    outbox_id = make_outbox_row()
    assert deliver(ctx, outbox_id) == "ack:failed"
    row = outbox_row(outbox_id)
    assert row["status"] == FAILED and row["last_error"].startswith("provider_rejected: 422")
    assert provider_model.sent() == []


def test_retryable_answers_grow_their_delay_up_to_the_cap(ctx, make_outbox_row, outbox_row, provider_model, make_due):

    outbox_id = make_outbox_row()
    faults = ["http_500", "http_429", "http_500", "http_500"]
    reasons, delays = [], []
    for attempt, fault in enumerate(faults, start=1):
        if fault == "http_429":
            provider_model.fail_next(fault, retry_after=1)
        else:
            provider_model.fail_next(fault)
        # Each attempt may only start once the previous one released the row and its time came.
        make_due(outbox_id)
        result = deliver(ctx, outbox_id, attempt=attempt)
        row = outbox_row(outbox_id)
        if result == "ack:sent":
            break
        assert row["status"] == RETRY, result
        reasons.append(row["last_error"])
        delays.append((clock.parse(row["next_attempt_at"]) - clock.parse(row["updated_at"])).total_seconds())
    assert reasons[:2] == ["provider_error: 500 application_error", "rate_limited: rate_limit_exceeded"]
    base, cap = ctx.settings.outbox_retry_base_seconds, ctx.settings.outbox_retry_cap_seconds
    assert len(delays) == 4
    for attempt, delay in enumerate(delays, start=1):
        ceiling = min(cap, base * 2 ** (attempt - 1))  # 1, 2, 4, then the cap (4) instead of 8
        assert 0.8 * ceiling - 0.01 <= delay <= ceiling + 0.01, (attempt, delay)
    assert delays[0] < delays[1] < delays[2]


def test_concurrent_request_conflict_is_retried(ctx, make_outbox_row, outbox_row, provider_model):
    import threading

    outbox_id = make_outbox_row(recipient="lin@example.org")
    provider_model.fail_next("slow_accept", delay=1.5)
    # The first delivery's request is still in flight at the provider when a second one arrives.
    first = threading.Thread(target=deliver, args=(ctx, outbox_id))
    first.start()
    assert wait_until(provider_model.requests, timeout=5, interval=0.02)
    with ctx.db.write() as conn:  # the first claim has expired (a slow worker), so another may claim
        conn.execute(
            sa.text("UPDATE email_outbox SET claim_expires_at = '2000-01-01T00:00:00.000000Z' WHERE id = :id"),
            {"id": outbox_id},
        )
    second = deliver(ctx, outbox_id, attempt=2)
    first.join()
    assert second == "retry:concurrent_idempotent_requests"
    # The first delivery's acceptance still lands: the row ends sent, with one email.
    assert outbox_row(outbox_id)["status"] == SENT
    assert len(provider_model.sent()) == 1
    outcomes = [r["outcome"] for r in provider_model.requests()]
    assert "conflict_concurrent" in outcomes


def test_unknown_outcome_past_the_provider_window_is_never_resent(ctx, make_outbox_row, outbox_row, provider_model):
    outbox_id = make_outbox_row()
    provider_model.fail_next("http_500")
    first_attempt = clock.utcnow()
    assert deliver(ctx, outbox_id, now=first_attempt).startswith("retry:")
    assert outbox_row(outbox_id)["outcome_unknown"] == 1
    a_day_and_a_bit_later = first_attempt + timedelta(seconds=ctx.settings.provider_idempotency_window_seconds + 3600)
    requests_before = len(provider_model.requests())
    assert deliver(ctx, outbox_id, attempt=2, now=a_day_and_a_bit_later) == "ack:unknown_outcome"
    row = outbox_row(outbox_id)
    assert row["status"] == DEAD_LETTER and row["last_error"] == UNKNOWN_OUTCOME
    assert len(provider_model.requests()) == requests_before and provider_model.sent() == []


def test_a_definite_rejection_is_not_counted_as_unknown(ctx, make_outbox_row, outbox_row, provider_model):
    outbox_id = make_outbox_row()
    provider_model.fail_next("http_429", retry_after=1)
    deliver(ctx, outbox_id)
    assert outbox_row(outbox_id)["outcome_unknown"] == 0


def test_suppressed_recipient_is_not_sent(ctx, make_outbox_row, outbox_row, provider_model, count):
    with ctx.db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO email_suppressions (email, reason, source, created_at) "
                "VALUES ('bounced@example.org', 'bounced', 'test', '2026-01-01T00:00:00.000000Z')"
            )
        )
    outbox_id = make_outbox_row(recipient="Bounced@Example.org")
    assert deliver(ctx, outbox_id) == "ack:suppressed"
    row = outbox_row(outbox_id)
    assert row["status"] == SUPPRESSED and row["first_attempt_at"] is None, "no first attempt was recorded"
    assert provider_model.requests() == [] and count("email_frozen_payloads") == 0


def test_a_row_out_of_attempts_records_no_first_attempt(ctx, make_outbox_row, outbox_row, provider_model, count):
    outbox_id = make_outbox_row(
        status="retry", provider_message_id=None, attempt_count=ctx.settings.outbox_max_attempts
    )
    assert deliver(ctx, outbox_id) == "ack:delivery_exhausted"
    row = outbox_row(outbox_id)
    assert (row["status"], row["last_error"], row["first_attempt_at"]) == (DEAD_LETTER, "delivery_exhausted", None)
    assert provider_model.requests() == [] and count("email_frozen_payloads") == 0


def test_more_than_one_attachment_is_refused_before_sending(ctx, make_outbox_row, provider_model):
    import pytest

    from portal.outbox.ground.rendering import Attachment, RenderedEmail
    from portal.outbox.send.freeze import FreezeError, freeze_or_replay

    two = RenderedEmail("a@b.example", "s", "<p>h</p>", "t", attachments=(Attachment("a", "QQ==", "text/plain"),) * 2)
    with pytest.raises(FreezeError):
        freeze_or_replay(ctx.db, make_outbox_row(), two, now=clock.utcnow())


def test_a_row_that_may_have_gone_out_never_settles_as_unsent(
    ctx, make_outbox_row, outbox_row, provider_model, make_due
):
    outbox_id = make_outbox_row(recipient="maybe@example.org")
    provider_model.fail_next("http_500")  # the request reached the provider; its outcome is unknown
    assert deliver(ctx, outbox_id).startswith("retry:")
    with ctx.db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO email_suppressions (email, reason, source, created_at) "
                "VALUES ('maybe@example.org', 'bounced', 'test', '2026-01-01T00:00:00.000000Z')"
            )
        )
    make_due(outbox_id)
    assert deliver(ctx, outbox_id, attempt=2) == "ack:unknown_outcome"
    row = outbox_row(outbox_id)
    assert (row["status"], row["last_error"]) == (DEAD_LETTER, UNKNOWN_OUTCOME)


def test_a_stale_claim_holder_cannot_release_anothers_claim(ctx, make_outbox_row, outbox_row):
    from portal.outbox.ground.rows import mark_retry
    from portal.outbox.send.claims import claim_outbox_row

    outbox_id = make_outbox_row()
    first = claim_outbox_row(ctx.db, outbox_id, claim_seconds=60, now=clock.utcnow())
    with ctx.db.write() as conn:  # the first claim expires; a second delivery claims the row
        conn.execute(sa.text("UPDATE email_outbox SET claim_expires_at = '2000-01-01T00:00:00.000000Z'"))
    second = claim_outbox_row(ctx.db, outbox_id, claim_seconds=60, now=clock.utcnow())
    assert second.attempt_count == first.attempt_count + 1
    assert (
        mark_retry(ctx.db, outbox_id, first.attempt_count, 1, "late", outcome_unknown=False, now=clock.utcnow())
        is False
    )
    assert outbox_row(outbox_id)["status"] == "processing"
    assert (
        mark_retry(ctx.db, outbox_id, second.attempt_count, 1, "ours", outcome_unknown=False, now=clock.utcnow())
        is True
    )
