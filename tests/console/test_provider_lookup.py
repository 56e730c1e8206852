"""The provider model's "list sent emails" and "retrieve" through the real SDK, as the lookup uses them."""

from __future__ import annotations

from portal.outbox.hear.lookup import ask_provider


def test_listing_pages_newest_first_through_every_email(ctx, make_outbox_row, deliver, provider_model):
    for n in range(5):
        assert deliver(make_outbox_row(recipient=f"p{n}@example.org")) == "ack:sent"
    seen, after = [], None
    while True:
        page = ctx.provider.list_emails(limit=2, after=after)
        seen += [email["to"][0] for email in page["data"]]
        if not page["has_more"]:
            break
        after = page["data"][-1]["id"]
    assert seen == [f"p{n}@example.org" for n in reversed(range(5))]


def test_a_row_with_a_message_id_is_retrieved_by_it(ctx, make_outbox_row, deliver, outbox_row):
    outbox_id = make_outbox_row(recipient="ada@example.org")
    assert deliver(outbox_id) == "ack:sent"
    row = outbox_row(outbox_id)
    result = ask_provider(ctx.provider, row)
    assert result.found is not None and result.found.message_id == row["provider_message_id"]


def test_an_unreachable_provider_is_reported_not_raised(ctx, unknown_outcome, outbox_row, provider_model):
    row = outbox_row(unknown_outcome())
    provider_model.stop()
    result = ask_provider(ctx.provider, row)
    assert result.found is None and result.error and not result.complete


def test_a_lookup_takes_its_requests_slots_from_the_senders_rate_limit(
    ctx, make_outbox_row, deliver, outbox_row, monkeypatch
):
    """Resend's limit is per team: a lookup's requests share the workers' window, and when sending
    holds every slot the lookup asks nothing and says why, instead of pushing sends into 429s."""
    import time

    from portal.outbox.hear import lookup
    from portal.outbox.send.rate_limit import rate_limit_for

    outbox_id = make_outbox_row(recipient="ada@example.org")
    assert deliver(outbox_id) == "ack:sent"
    row = outbox_row(outbox_id)
    slots = rate_limit_for(ctx.redis, ctx.settings.redis_url, 2)

    assert ask_provider(ctx.provider, row, slots).found is not None
    assert slots.room_left() == 1, "its request took a slot"

    while slots.acquire(time.monotonic()):  # sending takes whatever is left of this second
        pass
    monkeypatch.setattr(lookup, "LOOKUP_WAIT_SECONDS", 0)
    result = ask_provider(ctx.provider, row, slots)
    assert (result.error, result.found, result.complete) == (lookup.RATE_LIMITED, None, False)


def test_a_lookup_asks_nothing_when_the_shared_limit_cannot_be_read(ctx, unknown_outcome, outbox_row):
    from redis import Redis

    from devtools.processes import free_port
    from portal.outbox.send.rate_limit import ProviderRateLimit

    nowhere = f"redis://127.0.0.1:{free_port()}"
    slots = ProviderRateLimit(Redis.from_url(nowhere, socket_connect_timeout=1), nowhere, 5)
    result = ask_provider(ctx.provider, outbox_row(unknown_outcome()), slots)
    assert (result.error, result.found, result.complete) == ("ConnectionError", None, False)
