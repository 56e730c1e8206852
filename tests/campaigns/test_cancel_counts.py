"""A campaign cancel says what it did: emails it stopped, and emails already with the provider (or on
their way to it) that may still go out. With the provider model over HTTP holding a batch request
(a slow acceptance) while the admin cancels, and the real consumer delivering it in a thread."""

from __future__ import annotations

import threading

from devtools.testing import wait_until
from portal.campaigns import operations
from portal.campaigns.sending import write_next_batch
from tests.pages import csrf_from

BATCH = "/emails/batch"


def in_flight(provider_model) -> bool:
    return any(entry["outcome"] == "in_flight" for entry in provider_model.requests())


def test_a_cancel_while_a_batch_is_at_the_provider_does_not_count_it_as_stopped(
    ctx, client, admin, people, draft, outbox_rows, deliver, provider_model
):
    company, _ = people(volunteers=3)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    write_next_batch(ctx, campaign, batch_size=2)  # one provider batch of two
    write_next_batch(ctx, campaign, batch_size=2)  # another, still waiting when the admin cancels
    first, _, third, _ = outbox_rows(family="campaign")
    assert first["batch_id"] != third["batch_id"]

    provider_model.fail_next("slow_accept", delay=2.0, path=BATCH)
    decisions = []
    delivery = threading.Thread(target=lambda: decisions.append(deliver(first["id"])))
    delivery.start()
    try:
        assert wait_until(lambda: in_flight(provider_model), timeout=10), "the first batch is at the provider"
        page = client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True)
        answer = client.post(
            f"/admin/campaigns/{campaign}/cancel",
            data={"csrf_token": csrf_from(page), "confirmed": "yes"},
            follow_redirects=True,
        )
    finally:
        delivery.join(timeout=30)

    assert decisions == ["ack:sent"], "the request was on its way: the provider took both emails"
    assert len(provider_model.sent()) == 2
    table = page[page.index('id="outcomes"') :]
    assert "Being sent" in table and "it may already be with the provider" in table
    being_sent = table[table.index("Being sent") :]
    assert being_sent[being_sent.index('class="num">') :].startswith('class="num">2<'), "the batch at the provider"
    waiting = table[table.index("Waiting") :]
    assert waiting[waiting.index('class="num">') :].startswith('class="num">2<'), "the batch not yet claimed"
    said = answer.get_data(as_text=True)
    assert "4 emails not yet sent will not go out" not in said
    assert "Cancelled. 2 emails not yet sent will not go out." in said
    assert "2 were already with the provider, or on their way to it, and may still go out." in said

    shown = client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True)
    assert "Sent to 2 of 4" in shown
    assert "Partly sent, then cancelled" in shown, "not shown as simply cancelled while two went out"
    assert "The cancel stopped only emails not yet with the provider: 2 had already reached it." in shown
    assert {row["status"] for row in outbox_rows(family="campaign")} == {"sent", "cancelled"}


def test_the_cancel_hands_back_what_it_stopped_and_what_may_still_go_out(
    ctx, people, draft, outbox_rows, deliver, provider_model
):
    company, _ = people(volunteers=3)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    write_next_batch(ctx, campaign, batch_size=1)
    write_next_batch(ctx, campaign, batch_size=3)
    first, second, *_ = outbox_rows(family="campaign")
    assert deliver(first["id"]) == "ack:sent"  # gone before the cancel: in neither count

    provider_model.fail_next("slow_accept", delay=2.0, path=BATCH)
    decisions = []
    delivery = threading.Thread(target=lambda: decisions.append(deliver(second["id"])))
    delivery.start()
    try:
        assert wait_until(lambda: in_flight(provider_model), timeout=10)
        result = operations.cancel(ctx.db, campaign_id=campaign)
    finally:
        delivery.join(timeout=30)

    assert (result.stopped, result.may_still_go_out) == (0, 3)
    assert decisions == ["ack:sent"] and len(provider_model.sent()) == 4, "every email went out"


def test_a_cancel_before_any_request_stops_every_email(ctx, people, draft, outbox_rows, provider_model):
    company, _ = people(volunteers=3)
    campaign = draft(f"company:{company}")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    write_next_batch(ctx, campaign, batch_size=4)
    result = operations.cancel(ctx.db, campaign_id=campaign)
    assert (result.stopped, result.may_still_go_out) == (4, 0)
    assert {row["status"] for row in outbox_rows(family="campaign")} == {"cancelled"}
    assert provider_model.requests() == []


def test_a_cancelled_campaign_is_named_by_what_reached_the_provider():
    from portal.campaigns.queries import PARTLY_SENT, SENT_BEFORE_THE_CANCEL, STATUS_WORDS, outcomes_from, status_label

    assert status_label("cancelled", outcomes_from({"delivered": 3})) == SENT_BEFORE_THE_CANCEL
    assert status_label("cancelled", outcomes_from({"delivered": 1, "cancelled": 2})) == PARTLY_SENT
    assert status_label("cancelled", outcomes_from({"cancelled": 3})) == STATUS_WORDS["cancelled"]


def test_a_cancel_that_stopped_nothing_says_so_without_a_count_of_zero(app):
    from portal.campaigns.operations import CancelResult
    from portal.campaigns.routes import _cancel_said

    with app.test_request_context():
        assert _cancel_said(CancelResult(stopped=0, may_still_go_out=3)) == (
            "Cancelled, but its 3 emails were already with the provider, or on their way to it, and may still go out."
        )
        assert _cancel_said(CancelResult(stopped=2, may_still_go_out=1)).startswith(
            "Cancelled. 2 emails not yet sent will not go out. 1 was already with the provider"
        )
