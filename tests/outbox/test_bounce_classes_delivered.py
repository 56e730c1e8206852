"""Bounce classes end to end: real RQ workers send through the resend SDK to the provider model,
which posts Resend's signed bounce receipts to the portal served over HTTP; the class is kept with
each receipt, a hard bounce suppresses at once and a soft one only as the second within 30 days."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from devtools.testing import wait_until
from portal.outbox.ground.bounce_classes import MAILBOX_FULL, NO_MAILBOX, TEMPORARY
from portal.outbox.hear.receipts import SOFT_BOUNCES_REASON


@pytest.fixture
def hooked_model(provider_model, live_portal, settings):
    provider_model.post_receipts_to(f"{live_portal}/webhooks/resend", settings.resend_webhook_secret)
    return provider_model


def bounces(db) -> list[tuple[str, str]]:
    with db.read() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                sa.text(
                    "SELECT o.recipient, r.bounce_class FROM email_receipts r JOIN email_outbox o ON o.id = r.outbox_id "
                    "WHERE r.type = 'email.bounced' AND r.processed_at IS NOT NULL ORDER BY o.recipient, r.id"
                )
            )
        ]


def suppressed(db) -> dict[str, str]:
    with db.read() as conn:
        return dict(conn.execute(sa.text("SELECT email, reason FROM email_suppressions")).all())


def send_and_hear(hooked_model, workers, db, make_outbox_row, recipients, expected_bounces):
    for recipient in recipients:
        make_outbox_row(recipient=recipient, publish=True)
    workers.drain()
    hooked_model.wait_for_receipts(timeout=30)
    assert wait_until(lambda: len(bounces(db)) == expected_bounces)


def test_hard_and_soft_bounces_over_the_workers_and_the_provider_model(hooked_model, workers, make_outbox_row, db):
    send_and_hear(
        hooked_model,
        workers,
        db,
        make_outbox_row,
        ["bounce.nomailbox@example.org", "bounce.full@example.org", "bounce.temporary@example.org"],
        expected_bounces=3,
    )
    assert bounces(db) == [
        ("bounce.full@example.org", MAILBOX_FULL),
        ("bounce.nomailbox@example.org", NO_MAILBOX),
        ("bounce.temporary@example.org", TEMPORARY),
    ]
    # The hard bounce at once; each soft one, the first, not yet.
    assert suppressed(db) == {"bounce.nomailbox@example.org": "bounced (permanent)"}

    # A second email to the full mailbox bounces again within the 30 days: now it is suppressed.
    send_and_hear(hooked_model, workers, db, make_outbox_row, ["bounce.full@example.org"], expected_bounces=4)
    assert suppressed(db) == {
        "bounce.nomailbox@example.org": "bounced (permanent)",
        "bounce.full@example.org": SOFT_BOUNCES_REASON,
    }
