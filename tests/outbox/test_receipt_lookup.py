"""Asking the provider, politely, about accepted emails whose receipt never came: what it says is
recorded as a receipt from a lookup and moves the row by the receipts' rules; what it cannot say
changes nothing; the hourly budget and the sends come first."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from portal.core import clock
from portal.core.periods import report_timezone
from portal.outbox.handles import PortalContext
from portal.outbox.provider import ResendProvider
from portal.outbox.rate_limit import PAUSE_KEY
from portal.outbox.receipt_lookup import (
    HOURLY_BUDGET_SPENT,
    PROVIDER_UNREACHABLE,
    SENDING_FIRST,
    look_up_missing_receipts,
)
from portal.outbox.reconciliation import reconcile
from portal.outbox.statuses import BOUNCED, DELIVERED, SENT


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
