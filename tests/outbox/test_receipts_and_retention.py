"""Receipts keep only what the portal reads, for a while; settled rows forget their recipient;
bounces without a usable date still suppress; email.failed and email.suppressed are applied;
configuration that lets a claim expire mid-send is refused (issue 9, defects 9 to 11)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa

from portal.core import clock
from portal.core.settings import ConfigError, Settings
from portal.outbox.ground.statuses import DELIVERED, ENQUEUED, FAILED, SENT, SUPPRESSED
from portal.outbox.hear.receipts import apply_receipt_event
from portal.outbox.operate.retention import purge, retention_glance
from tests.builders import event


@pytest.fixture
def receive(ctx):
    counter = iter(range(1, 10_000))

    def receive(payload):
        return apply_receipt_event(
            ctx.db, f"msg_{next(counter)}", json.dumps(payload).encode(), environment="development", now=clock.utcnow()
        )

    return receive


def stored_receipts(db):
    with db.read() as conn:
        return [dict(row) for row in conn.execute(sa.text("SELECT * FROM email_receipts ORDER BY id")).mappings()]


def is_suppressed(db, email):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT 1 FROM email_suppressions WHERE email = :e"), {"e": email}).first()


# --- 9. what is kept, and for how long -------------------------------------------------------------


def test_ignored_event_types_keep_no_body(ctx, receive, make_outbox_row):
    make_outbox_row(status=SENT)
    opened = event("email.opened", ipAddress="203.0.113.9", userAgent="Mozilla/5.0 (X11)")
    assert receive(opened) == "ignored_type"
    (stored,) = stored_receipts(ctx.db)
    assert stored["payload"] is None and stored["type"] == "email.opened"


def test_a_kept_receipt_holds_only_the_fields_the_portal_reads(ctx, receive, make_outbox_row):
    make_outbox_row(status=SENT)
    receive(event("email.delivered", subject="Your salary review", headers=[{"name": "X-Secret", "value": "s"}]))
    receive(event("email.delivered", email_id="re_not_ours", subject="Someone else's"))  # unmatched
    for stored in stored_receipts(ctx.db):
        assert "salary" not in stored["payload"] and "Someone" not in stored["payload"]
        assert "X-Secret" not in stored["payload"]


def test_purge_deletes_old_receipt_bodies_and_erases_old_settled_rows(
    ctx, receive, make_outbox_row, outbox_row, runner
):
    old_sent = make_outbox_row(status=SENT, recipient="old@example.org", data={"subject": "S", "body": "secret"})
    new_sent = make_outbox_row(status=DELIVERED, provider_message_id="re_new", recipient="new@example.org")
    old_waiting = make_outbox_row(status=ENQUEUED, provider_message_id=None, recipient="waiting@example.org")
    receive(event("email.delivered"))
    receive(event("email.delivered", email_id="re_new"))
    long_ago = clock.iso_in(-400 * 86400)
    with ctx.db.write() as conn:
        conn.execute(
            sa.text("UPDATE email_outbox SET updated_at = :t WHERE id IN (:a, :b)"),
            {"t": long_ago, "a": old_sent, "b": old_waiting},
        )
        conn.execute(
            sa.text("UPDATE email_receipts SET received_at = :t WHERE provider_message_id = 're_msg_1'"),
            {"t": long_ago},
        )

    def glance():
        return {kept.what: kept for kept in retention_glance(ctx.db, ctx.settings)}

    before = glance()
    receipts, settled = before["Receipt bodies"], before["Settled emails' recipients and inputs"]
    assert (receipts.count, receipts.oldest) == (2, long_ago)
    assert clock.parse(receipts.oldest_goes_at) == clock.parse(long_ago) + timedelta(days=30)  # past: the purge's
    assert (settled.count, settled.oldest) == (2, long_ago)  # old_waiting is not settled
    assert clock.parse(settled.oldest_goes_at) == clock.parse(long_ago) + timedelta(days=365)

    result = runner.invoke(args=["outbox", "purge"])
    assert result.exit_code == 0, result.output
    assert "1 receipt bodies deleted, 1 outbox rows erased" in result.output
    after = glance()
    assert after["Receipt bodies"].count == 1 and after["Settled emails' recipients and inputs"].count == 1
    assert "@" not in result.output

    erased = outbox_row(old_sent)
    assert (erased["recipient"], erased["template_input"], erased["status"]) == ("", "{}", DELIVERED)
    assert outbox_row(new_sent)["recipient"] == "new@example.org", "younger than OUTBOX_RETENTION_DAYS"
    assert outbox_row(old_waiting)["recipient"] == "waiting@example.org", "still has an email to send"
    kept = {r["provider_message_id"]: r for r in stored_receipts(ctx.db)}
    assert kept["re_msg_1"]["payload"] is None and kept["re_msg_1"]["outcome"] == "applied"
    assert kept["re_new"]["payload"] is not None
    # Running it again changes nothing.
    assert purge(ctx.db, ctx.settings, now=clock.utcnow()).summary() == "0 receipt bodies deleted, 0 outbox rows erased"


# --- 10. bounces without a date; email.failed and email.suppressed ---------------------------------


def test_a_bounce_without_a_usable_date_still_suppresses_the_address(ctx, receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT, recipient="gone@example.org")
    bounce = event("email.bounced", to="gone@example.org", bounce={"type": "Permanent", "subType": "General"})
    bounce["created_at"] = "not a date"
    assert receive(bounce) == "undated"
    assert is_suppressed(ctx.db, "gone@example.org")
    assert outbox_row(outbox_id)["status"] == SENT, "an undated receipt cannot be ordered, so the row stays"


def test_email_failed_marks_the_row_failed(ctx, receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT, recipient="quota@example.org")
    assert receive(event("email.failed", to="quota@example.org", failed={"reason": "reached_daily_quota"})) == "applied"
    assert outbox_row(outbox_id)["status"] == FAILED
    assert not is_suppressed(ctx.db, "quota@example.org"), "a failure is not a fact about the address"
    # Nothing moves a failed row on: a later delivered receipt is not eligible.
    assert receive(event("email.delivered", created_at="2026-10-15T10:00:00Z")) == "not_eligible"


def test_email_suppressed_marks_the_row_and_suppresses_the_address(ctx, receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT, recipient="listed@example.org")
    assert receive(event("email.suppressed", to="listed@example.org")) == "applied"
    assert outbox_row(outbox_id)["status"] == SUPPRESSED
    assert is_suppressed(ctx.db, "listed@example.org")


# --- 11. a claim must outlive one delivery ----------------------------------------------------------


@pytest.mark.parametrize(
    "environ",
    [
        {"OUTBOX_CLAIM_SECONDS": "10"},  # the provider timeout is 15 s by default
        {"OUTBOX_CLAIM_SECONDS": "30", "PROVIDER_TIMEOUT_SECONDS": "30"},
    ],
)
def test_a_claim_shorter_than_the_provider_timeout_is_refused_at_start(environ, tmp_path):
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({"SECRET_KEY": "k", **environ}, instance_path=tmp_path)
    assert refused.value.variable == "OUTBOX_CLAIM_SECONDS"


def test_the_job_time_limit_is_the_claim(tmp_path):
    settings = Settings.from_env({"SECRET_KEY": "k", "OUTBOX_CLAIM_SECONDS": "120"}, instance_path=tmp_path)
    assert settings.outbox_job_timeout_seconds == 120


@pytest.mark.parametrize(
    "name, value",
    [
        ("RESEND_RATE_LIMIT_PER_SECOND", "0"),
        ("RECEIPT_RETENTION_DAYS", "soon"),
        ("OUTBOX_RETENTION_DAYS", "-1"),
        ("PROVIDER_TIMEOUT_SECONDS", "nan"),
        ("PROVIDER_WINDOW_MARGIN_SECONDS", "86400"),
    ],
)
def test_bad_values_of_the_new_variables_are_refused_by_name(name, value, tmp_path):
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({"SECRET_KEY": "k", name: value}, instance_path=tmp_path)
    assert refused.value.variable == name
