"""Asking the provider, politely, about accepted emails whose receipt never came: what it says is
recorded as a receipt from a lookup and moves the row by the receipts' rules; what it cannot say
changes nothing; the hourly budget and the sends come first."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa

from devtools.testing import wait_until
from portal.core import clock
from portal.core.periods import report_timezone
from portal.outbox.ground.handles import PortalContext
from portal.outbox.ground.periodic import run_once_with_lock
from portal.outbox.ground.provider import ResendProvider
from portal.outbox.ground.statuses import BOUNCED, COMPLAINED, DELIVERED, SENT
from portal.outbox.hear.receipt_lookup import (
    HOURLY_BUDGET_SPENT,
    PASS_INTERVAL_SECONDS,
    PROVIDER_UNREACHABLE,
    SENDING_FIRST,
    look_up_missing_receipts,
    lookup_task,
)
from portal.outbox.hear.receipts import apply_receipt_event
from portal.outbox.hear.reconciliation import reconcile
from portal.outbox.send.rate_limit import PAUSE_KEY
from tests.builders import event


@pytest.fixture
def accepted_long_ago(ctx, make_outbox_row, deliver):
    """accepted_long_ago(recipient): an email the provider model accepted, its receipt never come
    (the model here has no webhook), accepted 49 hours ago. Returns its row ID."""

    def make(recipient: str) -> str:
        outbox_id = make_outbox_row(recipient=recipient, publish=True)
        assert deliver(outbox_id) == "ack:sent"
        with ctx.db.write() as conn:
            conn.execute(
                sa.text("UPDATE email_outbox SET sent_at = :then WHERE id = :id"),
                {"id": outbox_id, "then": clock.iso_in(-49 * 3600)},
            )
        return outbox_id

    return make


def lookups(ctx) -> dict[str, tuple]:
    with ctx.db.read() as conn:
        return {
            row[0]: tuple(row[1:]) for row in conn.execute(sa.text("SELECT outbox_id, asks, answer FROM email_lookups"))
        }


def receipts_of(ctx, outbox_id) -> list[tuple]:
    with ctx.db.read() as conn:
        return [
            tuple(row)
            for row in conn.execute(
                sa.text("SELECT type, source, outcome FROM email_receipts WHERE outbox_id = :id ORDER BY id"),
                {"id": outbox_id},
            )
        ]


@pytest.fixture
def webhook(ctx, outbox_row):
    """webhook(outbox_id, type, happened_at, received_at, **data): that email's receipt as the webhook
    hands it over, verified, at `received_at`, for an event the provider dates `happened_at`; the outcome."""

    def receive(outbox_id, receipt_type, *, happened_at, received_at, **data):
        row = outbox_row(outbox_id)
        payload = event(
            receipt_type,
            email_id=row["provider_message_id"],
            to=row["recipient"],
            created_at=happened_at.isoformat(),
            environment=ctx.settings.portal_env,
            outbox_id=outbox_id,
            **data,
        )
        event_id = f"msg_{receipt_type}_{outbox_id}"
        return apply_receipt_event(
            ctx.db, event_id, json.dumps(payload).encode(), environment=ctx.settings.portal_env, now=received_at
        )

    return receive


def suppressed(ctx) -> dict[str, str]:
    with ctx.db.read() as conn:
        return dict(conn.execute(sa.text("SELECT email, reason FROM email_suppressions")).all())


def test_what_the_provider_says_is_recorded_as_a_lookup_and_moves_the_row(
    ctx, accepted_long_ago, outbox_row, make_outbox_row
):
    lost = accepted_long_ago("noreceipt.ada@example.org")  # delivered; only the webhook never came
    bounced = accepted_long_ago("bounce.bo@example.org")
    recent = make_outbox_row(status=SENT, provider_message_id="re_recent", sent_at=clock.iso_in(-3600))
    now = clock.utcnow()
    zone = report_timezone(ctx.settings)
    before = reconcile(ctx.db, days=[now.astimezone(zone).date()], zone=zone, no_receipt_hours=48, now=now)
    assert before.totals[0]["no_receipt"] == 2 and before.totals[0]["awaiting_receipt"] == 1

    result = look_up_missing_receipts(ctx, now=now)

    assert (result.asked, result.learned, result.stopped) == (2, 2, None)  # not the one accepted an hour ago
    assert outbox_row(lost)["status"] == DELIVERED and outbox_row(bounced)["status"] == BOUNCED
    assert outbox_row(recent)["status"] == SENT
    assert receipts_of(ctx, lost) == [("email.delivered", "lookup", "applied")]
    assert receipts_of(ctx, bounced) == [("email.bounced", "lookup", "applied")]
    with ctx.db.read() as conn:  # the same rules as a webhook's bounce: the address is suppressed
        assert conn.execute(sa.text("SELECT reason FROM email_suppressions")).scalars().all() == ["bounced (permanent)"]
    assert lookups(ctx) == {lost: (1, "delivered"), bounced: (1, "bounced")}
    after = reconcile(ctx.db, days=[now.astimezone(zone).date()], zone=zone, no_receipt_hours=48, now=now)
    assert after.totals[0]["no_receipt"] == 0 and after.totals[0]["delivered"] == 1
    assert look_up_missing_receipts(ctx, now=now).asked == 0  # nothing left to ask


def test_an_email_the_provider_does_not_know_changes_nothing_and_is_asked_again_later(ctx, make_outbox_row, outbox_row):
    unknown = make_outbox_row(status=SENT, provider_message_id="re_nowhere", sent_at=clock.iso_in(-60 * 3600))
    now = clock.utcnow()
    assert look_up_missing_receipts(ctx, now=now).asked == 1
    assert outbox_row(unknown)["status"] == SENT and receipts_of(ctx, unknown) == []
    assert lookups(ctx) == {unknown: (1, "not_found")}
    assert look_up_missing_receipts(ctx, now=now + timedelta(hours=1)).asked == 0  # not again so soon
    assert look_up_missing_receipts(ctx, now=now + timedelta(hours=7)).asked == 1
    assert lookups(ctx) == {unknown: (2, "not_found")}


def test_the_hourly_budget_and_the_sends_come_first(ctx, accepted_long_ago):
    rows = [accepted_long_ago(f"noreceipt.{n}@example.org") for n in range(3)]
    budgeted = PortalContext(**{**vars(ctx), "settings": ctx.settings.with_overrides(outbox_lookups_per_hour=2)})
    now = clock.utcnow()
    assert look_up_missing_receipts(budgeted, now=now).asked == 1  # a pass asks its share of the hour
    second = look_up_missing_receipts(budgeted, now=now, limit=10)
    assert (second.asked, second.stopped) == (1, HOURLY_BUDGET_SPENT)
    assert look_up_missing_receipts(budgeted, now=now, limit=10).asked == 0  # the hour's two are spent
    assert set(lookups(ctx)) == set(rows[:2])

    ctx.redis.set(PAUSE_KEY, "1", px=5_000)  # the provider told every sender to wait: no free slot
    paused = look_up_missing_receipts(ctx, now=now)
    assert (paused.asked, paused.stopped) == (0, SENDING_FIRST)


def test_an_unreachable_provider_ends_the_pass_and_changes_nothing(ctx, accepted_long_ago, outbox_row):
    rows = [accepted_long_ago(f"noreceipt.{n}@example.org") for n in range(2)]
    away = ctx.settings.with_overrides(resend_api_url="http://127.0.0.1:9", provider_timeout_seconds=1)
    unreachable = PortalContext(**{**vars(ctx), "settings": away, "provider": ResendProvider(away)})
    result = look_up_missing_receipts(unreachable, now=clock.utcnow())
    assert (result.asked, result.learned, result.stopped) == (1, 0, PROVIDER_UNREACHABLE)
    assert [outbox_row(r)["status"] for r in rows] == [SENT, SENT]
    assert list(lookups(ctx).values()) == [(1, PROVIDER_UNREACHABLE)]


# --- what instant a lookup's receipt carries ----------------------------------------------------
# GET /emails/{id} names the email's last event, not when it happened (Resend's answer has the
# email's created_at and last_event, no event time). A lookup's receipt is dated the earliest the
# event can have happened, so every receipt the webhook brings about a later event outranks it.


@pytest.mark.parametrize(
    ("receipt_type", "status", "reason"),
    [("email.bounced", BOUNCED, "bounced (permanent)"), ("email.complained", COMPLAINED, "complained")],
)
def test_a_bounce_or_complaint_received_after_a_delivered_lookup_still_moves_the_row(
    ctx, accepted_long_ago, outbox_row, webhook, receipt_type, status, reason
):
    outbox_id = accepted_long_ago("noreceipt.ada@example.org")  # the provider says: delivered
    now = clock.utcnow()
    assert look_up_missing_receipts(ctx, now=now).learned == 1
    assert outbox_row(outbox_id)["status"] == DELIVERED

    # The complaint (or a late bounce) happened an hour before the pass; its webhook comes after it,
    # as a redelivery does when the endpoint was down.
    outcome = webhook(
        outbox_id, receipt_type, happened_at=now - timedelta(hours=1), received_at=now + timedelta(minutes=5)
    )

    assert outcome == "applied"
    assert outbox_row(outbox_id)["status"] == status
    assert suppressed(ctx) == {"noreceipt.ada@example.org": reason}


def test_a_receipt_that_arrives_while_the_provider_is_asked_is_not_overruled_by_its_answer(
    ctx, accepted_long_ago, outbox_row, webhook
):
    outbox_id = accepted_long_ago("bounce.bo@example.org")  # the provider says: bounced
    now = clock.utcnow()

    class ComplaintArrivesMeanwhile:
        def retrieve_email(self, message_id):
            webhook(outbox_id, "email.complained", happened_at=now - timedelta(minutes=1), received_at=now)
            return ctx.provider.retrieve_email(message_id)

    asking = PortalContext(**{**vars(ctx), "provider": ComplaintArrivesMeanwhile()})
    assert look_up_missing_receipts(asking, now=now).asked == 1

    assert outbox_row(outbox_id)["status"] == COMPLAINED
    assert receipts_of(ctx, outbox_id) == [
        ("email.complained", "webhook", "applied"),
        ("email.bounced", "lookup", "stale"),
    ]
    assert suppressed(ctx) == {"bounce.bo@example.org": "complained"}


def test_a_lookup_is_dated_at_the_acceptance_or_the_last_receipt_never_at_the_pass(
    ctx, accepted_long_ago, outbox_row, webhook
):
    quiet = accepted_long_ago("noreceipt.ada@example.org")  # no receipt at all since acceptance
    recorded_late = accepted_long_ago("noreceipt.cy@example.org")
    sent_only = accepted_long_ago("noreceipt.bo@example.org")
    # The provider created this one 3 s before we recorded its acceptance (a slow commit).
    created = clock.parse(outbox_row(recorded_late)["sent_at"]) - timedelta(seconds=3)

    class CreatedEarlier:
        def retrieve_email(self, message_id):
            email = ctx.provider.retrieve_email(message_id)
            late = message_id == outbox_row(recorded_late)["provider_message_id"]
            return {**email, "created_at": created.isoformat()} if late else email

    accepted = clock.parse(outbox_row(sent_only)["sent_at"])
    # Its email.sent came, a second after acceptance; the delivery receipt never did.
    assert webhook(sent_only, "email.sent", happened_at=accepted + timedelta(seconds=1), received_at=accepted) == (
        "applied"
    )
    sent_at_provider = outbox_row(sent_only)["last_event_at"]

    roomy = ctx.settings.with_overrides(resend_rate_limit_per_second=100)  # three deliveries took this second's slots
    asking = PortalContext(**{**vars(ctx), "settings": roomy, "provider": CreatedEarlier()})
    assert look_up_missing_receipts(asking, now=clock.utcnow() + timedelta(hours=1)).learned == 3

    with ctx.db.read() as conn:
        dated = dict(
            conn.execute(
                sa.text("SELECT outbox_id, event_created_at FROM email_receipts WHERE source = 'lookup'")
            ).all()
        )
    assert dated == {
        quiet: outbox_row(quiet)["sent_at"],  # the model created it just now: our sent_at is earlier
        recorded_late: clock.iso(created),
        sent_only: sent_at_provider,
    }
    # Never older than the row's last receipt either: the answer still moves every row.
    assert [outbox_row(r)["status"] for r in (quiet, recorded_late, sent_only)] == [DELIVERED] * 3


def test_a_worker_asks_at_its_start_not_an_interval_later(ctx, accepted_long_ago, workers):
    """A worker restarted more often than the pass interval (ten minutes) used to never ask: its
    first pass came one interval after each start. Now a worker's first pass is due when it starts."""
    lost = accepted_long_ago("noreceipt.ada@example.org")
    workers()
    assert wait_until(lambda: lookups(ctx).get(lost) == (1, "delivered"), timeout=60), lookups(ctx)
    assert receipts_of(ctx, lost)[-1] == ("email.delivered", "lookup", "applied")


def test_workers_started_together_pass_once_an_interval(ctx, settings, accepted_long_ago):
    """Every worker's first pass is due at its start: the lock each takes outlives the pass, so of
    workers started together (a deploy) one asks and the others find the interval taken."""
    accepted_long_ago("noreceipt.bo@example.org")
    task = lookup_task(settings)
    now = clock.utcnow()
    assert run_once_with_lock(ctx, task, now=now) is True
    assert run_once_with_lock(ctx, task, now=now) is False  # a second worker, started at the same moment
    assert ctx.redis.ttl(task.lock_key) > PASS_INTERVAL_SECONDS - 60


def test_the_command_runs_a_pass_now_and_prints_what_it_learned(ctx, accepted_long_ago, runner):
    lost = accepted_long_ago("noreceipt.cy@example.org")
    bounced = accepted_long_ago("bounce.di@example.org")
    result = runner.invoke(args=["outbox", "lookups"])
    assert result.exit_code == 0, result.output
    lines = result.output.rstrip().splitlines()
    assert sorted(lines[:2]) == sorted([f"  {lost}: delivered", f"  {bounced}: bounced"])
    assert lines[2] == "2 asked, 2 receipts learned"
    # Accepted 49 hours ago: past the provider's 1 day, and one of them is now final.
    assert lines[3].startswith("0 accepted emails passed the provider's memory")
    assert "@" not in result.output
    assert lookups(ctx) == {lost: (1, "delivered"), bounced: (1, "bounced")}

    again = runner.invoke(args=["outbox", "lookups", "--limit", "0"])
    assert again.exit_code == 2 and lookups(ctx)[lost] == (1, "delivered")
