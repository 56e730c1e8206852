"""Cancelling rows of which nothing can have been sent: the engine's side of a campaign cancel, an
unsubscribe, a deactivation and the operator's cancel."""

import sqlalchemy as sa

from portal.core import clock, schema
from portal.core.db import Database
from portal.outbox.ground.rows import cancel_unsent


def test_only_rows_of_which_nothing_can_have_been_sent_are_cancelled(ctx, make_outbox_row, outbox_row):
    waiting = make_outbox_row(publish=True)
    retrying = make_outbox_row(status="retry", provider_message_id=None)
    # Released after a rate-limit wait (or a 429): its first attempt is stamped, no email went out.
    waited = make_outbox_row(status="retry", provider_message_id=None, first_attempt_at="2026-12-01T10:00:00Z")
    maybe_sent = make_outbox_row(
        status="retry", provider_message_id=None, first_attempt_at="2026-12-01T10:00:00Z", outcome_unknown=1
    )
    in_flight = make_outbox_row(status="processing", provider_message_id=None)
    sent = make_outbox_row(status="sent")

    with ctx.db.write() as conn:
        cancelled = cancel_unsent(
            conn, [waiting, retrying, waited, maybe_sent, in_flight, sent], "campaign_cancelled", now=clock.utcnow()
        )

    assert sorted(cancelled) == sorted([waiting, retrying, waited, in_flight])
    assert outbox_row(waiting)["status"] == "cancelled"
    assert outbox_row(waiting)["last_error"] == "campaign_cancelled"
    assert outbox_row(waiting)["relay_since"] is None, "the relay never republishes a cancelled row"
    assert outbox_row(waited)["status"] == "cancelled", "no request reached the provider"
    assert outbox_row(maybe_sent)["status"] == "retry", "it may have gone out: the provider's answer decides"
    assert outbox_row(in_flight)["status"] == "processing", "its holder settles it"
    assert outbox_row(in_flight)["cancel_reason"] == "campaign_cancelled"
    assert outbox_row(sent)["status"] == "sent"


def test_rebuilding_the_outbox_for_cancelled_keeps_rows_and_frozen_payloads(tmp_path):
    """0014 rebuilds email_outbox; the frozen payloads that cascade from it must survive."""
    directory = tmp_path / "migrations"
    directory.mkdir()
    for migration in schema.discover():
        if migration.filename < "0014":
            (directory / migration.filename).write_text(migration.sql)
    db = Database(f"sqlite+libsql:///{tmp_path / 'old.db'}")
    schema.upgrade(db, directory)
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO email_outbox (id, family, recipient, idempotency_key, status, template,"
                " template_version, layout_version, template_input, environment, first_attempt_at,"
                " created_at, updated_at, relay_since) VALUES ('ntc_1', 'notice', 'a@example.org', 'k1',"
                " 'retry', 'notice', 1, 1, '{}', 'test', '2026-12-01T10:00:00Z', 'now', 'now', 'r')"
            )
        )
        conn.execute(
            sa.text(
                "INSERT INTO email_frozen_payloads (outbox_id, from_address, subject, html, text, tags,"
                " created_at) VALUES ('ntc_1', 'portal@localhost', 'Hello', '<p>Hi</p>', 'Hi', '[]', 'now')"
            )
        )

    assert schema.upgrade(db) == [m.filename for m in schema.discover() if m.filename >= "0014"]
    with db.read() as conn:
        row = conn.execute(sa.text("SELECT status, relay_since FROM email_outbox WHERE id = 'ntc_1'")).one()
        frozen = conn.execute(sa.text("SELECT subject FROM email_frozen_payloads WHERE outbox_id = 'ntc_1'")).scalar()
    assert tuple(row) == ("retry", "r")
    assert frozen == "Hello"
    with db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET status = 'cancelled' WHERE id = 'ntc_1'"))
    db.dispose()
