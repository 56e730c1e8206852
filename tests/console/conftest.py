"""Console fixtures: the app talks to the provider model (for "ask the provider"), an admin is signed in."""

from __future__ import annotations

import pytest


@pytest.fixture
def settings(settings, provider_model):
    return settings.with_overrides(resend_api_url=provider_model.url, outbox_retry_base_seconds=1)


@pytest.fixture
def unknown_outcome(ctx, make_outbox_row, provider_model, deliver, make_due):
    """unknown_outcome(recipient=..., lost_after_accept=True): a row whose outcome became unknown, as
    it does in production: the provider took the email but its answer was lost (or it answered
    500), and by the retry the provider's idempotency window had passed. Returns the row's ID."""
    import sqlalchemy as sa

    from portal.core import clock

    def make(recipient="ada@example.org", lost_after_accept=True):
        outbox_id = make_outbox_row(recipient=recipient, publish=True)
        provider_model.fail_next("drop_after_accept" if lost_after_accept else "http_500")
        assert deliver(outbox_id).startswith("retry:")
        window = ctx.settings.provider_idempotency_window_seconds
        with ctx.db.write() as conn:  # a day later
            conn.execute(
                sa.text("UPDATE email_outbox SET first_attempt_at = :then WHERE id = :id"),
                {"id": outbox_id, "then": clock.iso_in(-window - 60)},
            )
        make_due(outbox_id)
        assert deliver(outbox_id, attempt=2) == "ack:unknown_outcome"
        return outbox_id

    return make
