"""What a verified receipt changes: the outbox row, the suppression list, and nothing twice.

The engine's side of a receipt (portal/outbox/hear/receipts.py), called as the webhook calls it once the
signature is verified; the endpoint itself is tested in tests/webhooks."""

from __future__ import annotations

import json
import uuid

import pytest
import sqlalchemy as sa

from portal.core import clock
from portal.outbox.ground.statuses import (
    BOUNCED,
    COMPLAINED,
    DEAD_LETTER,
    DELIVERED,
    ENQUEUED,
    FAILED,
    PENDING,
    PROCESSING,
    RETRY,
    SENT,
    SUPPRESSED,
    UNKNOWN_OUTCOME,
)
from portal.outbox.hear import receipts
from portal.outbox.hear.receipts import apply_receipt_event
from portal.outbox.hear.suppressions import remove_suppression
from portal.outbox.operate.reads import receipt_counts
from tests.builders import at, event


@pytest.fixture
def receive(ctx):
    """receive(event_dict_or_raw_text, event_id=None) -> the outcome, as the webhook hands a verified receipt over."""

    def receive(payload, event_id=None):
        body = payload if isinstance(payload, str) else json.dumps(payload)
        return apply_receipt_event(
            ctx.db,
            event_id or f"msg_{uuid.uuid4().hex}",
            body.encode(),
            environment=ctx.settings.portal_env,
            now=clock.utcnow(),
        )

    return receive


def receipt_row(db, event_id):
    with db.read() as conn:
        return (
            conn.execute(sa.text("SELECT * FROM email_receipts WHERE provider_event_id = :id"), {"id": event_id})
            .mappings()
            .one()
        )


def suppressions(db):
    with db.read() as conn:
        return [dict(r) for r in conn.execute(sa.text("SELECT * FROM email_suppressions ORDER BY email")).mappings()]


def audit(db):
    with db.read() as conn:
        return [dict(r) for r in conn.execute(sa.text("SELECT * FROM email_suppression_events ORDER BY id")).mappings()]


# --- moving the row ----------------------------------------------------------------------------


def test_delivered_receipt_moves_a_sent_row(receive, make_outbox_row, outbox_row, db):
    outbox_id = make_outbox_row(status=SENT)
    assert receive(event("email.delivered", created_at=at(5)), event_id="msg_a") == "applied"

    row = outbox_row(outbox_id)
    assert (row["status"], row["last_event_at"]) == (DELIVERED, "2026-10-15T09:30:05.000000Z")
    stored = receipt_row(db, "msg_a")
    assert stored["outcome"] == "applied" and stored["outbox_id"] == outbox_id
    assert stored["processed_at"] is not None
    assert stored["provider_message_id"] == "re_msg_1" and stored["type"] == "email.delivered"
    kept = json.loads(stored["payload"])
    assert kept["to"] == "ada@example.com" and kept["email_id"] == "re_msg_1"
    assert "subject" not in stored["payload"] and "from" not in kept, "only the fields the portal reads are kept"


@pytest.mark.parametrize(
    "event_type, status",
    [
        ("email.sent", SENT),
        ("email.delivered", DELIVERED),
        ("email.bounced", BOUNCED),
        ("email.complained", COMPLAINED),
    ],
)
def test_each_event_type_sets_its_status(receive, make_outbox_row, outbox_row, event_type, status):
    outbox_id = make_outbox_row(status=SENT)
    receive(event(event_type))
    assert outbox_row(outbox_id)["status"] == status


def test_replayed_receipt_is_applied_once(receive, make_outbox_row, outbox_row, count, make_user, user_id, db):
    outbox_id = make_outbox_row(status=SENT)
    assert receive(event("email.bounced", created_at=at(1)), event_id="msg_bounce") == "applied"
    # An admin takes the address off the list; a redelivery of the same receipt must not put it back.
    admin_id = user_id(make_user("admin"))
    remove_suppression(
        db, email="ada@example.com", reason="asked us by phone", actor_user_id=admin_id, now=clock.utcnow()
    )

    assert receive(event("email.bounced", created_at=at(1)), event_id="msg_bounce") == "duplicate"
    assert count("email_receipts") == 1
    assert count("email_suppressions") == 0
    assert [(e["action"], e["source"]) for e in audit(db)] == [("add", "webhook"), ("remove", "admin")]
    assert outbox_row(outbox_id)["status"] == BOUNCED


def test_replay_after_a_later_event_changes_nothing(receive, make_outbox_row, outbox_row, count):
    outbox_id = make_outbox_row(status=SENT)
    receive(event("email.delivered", created_at=at(1)), event_id="msg_delivered")
    receive(event("email.complained", created_at=at(2)), event_id="msg_complained")
    assert receive(event("email.delivered", created_at=at(1)), event_id="msg_delivered") == "duplicate"
    assert outbox_row(outbox_id)["status"] == COMPLAINED
    assert count("email_receipts") == 2


@pytest.mark.parametrize("late_type", ["email.sent", "email.delivered"])
def test_older_receipt_arriving_after_a_newer_one_changes_nothing(receive, make_outbox_row, outbox_row, db, late_type):
    outbox_id = make_outbox_row(status=SENT)
    receive(event("email.delivered", created_at=at(10)))
    before = outbox_row(outbox_id)

    late = receive(event(late_type, created_at=at(1)), event_id="msg_late")
    assert late == "stale"
    assert outbox_row(outbox_id) == before
    assert receipt_row(db, "msg_late")["outcome"] == "stale"


def test_older_higher_ranked_receipt_does_not_move_the_row(receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT)
    receive(event("email.delivered", created_at=at(10)))
    assert receive(event("email.complained", created_at=at(5))) == "stale"
    assert outbox_row(outbox_id)["status"] == DELIVERED


def test_newer_receipt_never_moves_a_row_back(receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT)
    receive(event("email.delivered", created_at=at(1)))
    assert receive(event("email.sent", created_at=at(9))) == "stale"
    assert outbox_row(outbox_id)["status"] == DELIVERED


def test_equally_new_receipt_moves_only_to_an_equal_or_higher_rank(receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT)
    receive(event("email.delivered", created_at=at(3)))
    assert receive(event("email.sent", created_at=at(3))) == "stale"
    assert receive(event("email.bounced", created_at=at(3))) == "applied"
    assert outbox_row(outbox_id)["status"] == BOUNCED


def test_bounce_and_complaint_rank_equal_so_the_newer_wins(receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT)
    receive(event("email.complained", created_at=at(2)))
    assert receive(event("email.bounced", created_at=at(1))) == "stale"
    assert receive(event("email.bounced", created_at=at(3))) == "applied"
    assert outbox_row(outbox_id)["status"] == BOUNCED


def test_time_zones_are_compared_as_instants(receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT)
    receive(event("email.delivered", created_at="2026-10-15T11:30:00.000+02:00"))  # 09:30Z
    assert receive(event("email.complained", created_at="2026-10-15T09:29:59.999Z")) == "stale"
    assert receive(event("email.complained", created_at="2026-10-15T09:30:00.001Z")) == "applied"
    assert outbox_row(outbox_id)["status"] == COMPLAINED


def test_delivery_delayed_is_recorded_without_a_status_change(receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT)
    before = outbox_row(outbox_id)
    assert receive(event("email.delivery_delayed")) == "no_status_change"
    assert outbox_row(outbox_id) == before


@pytest.mark.parametrize("status", [FAILED, SUPPRESSED, PROCESSING])
def test_rows_outside_the_receipt_statuses_do_not_move(receive, make_outbox_row, outbox_row, status):
    outbox_id = make_outbox_row(status=status)
    assert receive(event("email.delivered")) == "not_eligible"
    assert outbox_row(outbox_id)["status"] == status


def test_receipt_without_a_usable_time_is_stored_not_applied(receive, make_outbox_row, outbox_row, db):
    outbox_id = make_outbox_row(status=SENT)
    assert receive(event("email.delivered", created_at="last tuesday"), event_id="msg_x") == "undated"
    assert outbox_row(outbox_id)["status"] == SENT
    assert receipt_row(db, "msg_x")["event_created_at"] is None


def test_event_types_we_do_not_act_on_are_acknowledged(receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT)
    assert receive(event("email.opened")) == "ignored_type"
    assert receive({"type": "contact.created", "created_at": at(0), "data": {"id": "c1"}}) == "ignored_type"
    assert outbox_row(outbox_id)["status"] == SENT


def test_receipt_for_an_email_that_is_not_ours_is_stored_and_ignored(receive, make_outbox_row, outbox_row, db):
    outbox_id = make_outbox_row(status=SENT)
    assert receive(event("email.bounced", email_id="re_someone_else"), event_id="msg_foreign") == "unmatched"
    stored = receipt_row(db, "msg_foreign")
    assert stored["outbox_id"] is None and stored["payload"] is not None
    assert outbox_row(outbox_id)["status"] == SENT
    assert suppressions(db) == []


# --- environments ------------------------------------------------------------------------------


def test_other_environments_receipts_are_counted_and_not_applied(receive, make_outbox_row, outbox_row, db):
    outbox_id = make_outbox_row(status=SENT)
    assert receive(event("email.bounced", environment="staging"), event_id="msg_staging") == "other_environment"
    assert outbox_row(outbox_id)["status"] == SENT
    assert suppressions(db) == []
    stored = receipt_row(db, "msg_staging")
    assert stored["environment"] == "staging"
    assert stored["payload"] is None, "another environment's addresses are not ours to keep"
    # A redelivery is not counted twice.
    receive(event("email.bounced", environment="staging"), event_id="msg_staging")
    assert receipt_counts(db) == {"other_environment": 1}


def test_receipt_without_an_environment_tag_is_not_applied(receive, make_outbox_row, outbox_row, db):
    outbox_id = make_outbox_row(status=SENT)
    assert receive(event("email.delivered", tags={"family": "invitation"})) == "other_environment"
    assert outbox_row(outbox_id)["status"] == SENT


def test_tags_as_a_list_of_name_value_pairs_are_read(receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=SENT)
    tags = [{"name": "environment", "value": "development"}, {"name": "family", "value": "invitation"}]
    assert receive(event("email.delivered", tags=tags)) == "applied"
    assert outbox_row(outbox_id)["status"] == DELIVERED


def test_receipt_counts_report_every_outcome(receive, make_outbox_row, db):
    make_outbox_row(status=SENT)
    receive(event("email.delivered", created_at=at(2)))
    receive(event("email.sent", created_at=at(1)))
    receive(event("email.delivered", environment="staging"))
    receive(event("email.delivered", email_id="re_unknown"))
    assert receipt_counts(db) == {"applied": 1, "stale": 1, "other_environment": 1, "unmatched": 1}


# --- suppression -------------------------------------------------------------------------------


@pytest.mark.parametrize("bounce", [{"type": "Permanent", "subType": "General"}, None])
def test_permanent_or_untyped_bounce_suppresses_the_address(receive, make_outbox_row, db, bounce):
    make_outbox_row(status=SENT)
    extra = {"bounce": bounce} if bounce else {}
    receive(event("email.bounced", to="Ada Lovelace <Ada@Example.COM>", **extra))

    [entry] = suppressions(db)
    assert (entry["email"], entry["source"]) == ("ada@example.com", "webhook")
    [row] = audit(db)
    assert (row["email"], row["action"], row["source"], row["actor_user_id"]) == (
        "ada@example.com",
        "add",
        "webhook",
        None,
    )


def test_transient_bounce_does_not_suppress(receive, make_outbox_row, outbox_row, db):
    outbox_id = make_outbox_row(status=SENT)
    receive(event("email.bounced", bounce={"type": "Transient", "subType": "MailboxFull"}))
    assert outbox_row(outbox_id)["status"] == BOUNCED
    assert suppressions(db) == [] and audit(db) == []


def test_complaint_suppresses_the_address(receive, make_outbox_row, db):
    make_outbox_row(status=DELIVERED)
    receive(event("email.complained", to="grace@example.com"))
    assert [s["email"] for s in suppressions(db)] == ["grace@example.com"]
    assert suppressions(db)[0]["reason"] == "complained"


def test_stale_bounce_still_suppresses(receive, make_outbox_row, db):
    make_outbox_row(status=SENT)
    receive(event("email.complained", created_at=at(9)))
    assert receive(event("email.bounced", to="other@example.com", created_at=at(1))) == "stale"
    assert {s["email"] for s in suppressions(db)} == {"ada@example.com", "other@example.com"}


def test_already_suppressed_address_gets_no_second_audit_row(receive, make_outbox_row, db):
    make_outbox_row(status=SENT)
    make_outbox_row(provider_message_id="re_msg_2")
    receive(event("email.bounced"))
    receive(event("email.complained", email_id="re_msg_2"))
    assert len(suppressions(db)) == 1 and len(audit(db)) == 1
    assert suppressions(db)[0]["reason"] == "bounced (permanent)"


# --- settling a row through its outbox_id tag --------------------------------------------------


def test_unknown_outcome_row_is_settled_from_its_receipt(receive, make_outbox_row, outbox_row, db, count):
    outbox_id = make_outbox_row(
        status=DEAD_LETTER, provider_message_id=None, last_error=UNKNOWN_OUTCOME, outcome_unknown=1
    )
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO email_frozen_payloads (outbox_id, from_address, subject, html, text, tags, created_at) "
                "VALUES (:id, 'p@localhost', 's', 'h', 't', '[]', 'now')"
            ),
            {"id": outbox_id},
        )

    assert receive(event("email.delivered", email_id="re_found", outbox_id=outbox_id, created_at=at(4))) == "applied"
    row = outbox_row(outbox_id)
    assert (row["status"], row["provider_message_id"], row["last_error"], row["outcome_unknown"]) == (
        DELIVERED,
        "re_found",
        None,
        0,
    )
    assert row["last_event_at"] == "2026-10-15T09:30:04.000000Z"
    assert count("email_frozen_payloads") == 0, "the settled row's personal content is removed"

    # Later receipts for the same email now match by message ID.
    receive(event("email.complained", email_id="re_found", outbox_id=outbox_id, created_at=at(6)))
    assert outbox_row(outbox_id)["status"] == COMPLAINED


@pytest.mark.parametrize("status", [PENDING, ENQUEUED, PROCESSING, RETRY])
def test_waiting_or_in_flight_row_is_settled_as_sent(receive, make_outbox_row, outbox_row, status):
    outbox_id = make_outbox_row(status=status, provider_message_id=None, claim_expires_at="2099-01-01T00:00:00.000000Z")
    assert receive(event("email.sent", email_id="re_accepted", outbox_id=outbox_id)) == "applied"
    row = outbox_row(outbox_id)
    assert (row["status"], row["provider_message_id"], row["claim_expires_at"]) == (SENT, "re_accepted", None)


def test_delivery_delayed_settles_a_row_as_sent(receive, make_outbox_row, outbox_row):
    outbox_id = make_outbox_row(status=RETRY, provider_message_id=None)
    receive(event("email.delivery_delayed", email_id="re_accepted", outbox_id=outbox_id))
    assert outbox_row(outbox_id)["status"] == SENT


@pytest.mark.parametrize(
    "columns",
    [
        {"status": FAILED, "provider_message_id": None},
        {"status": SUPPRESSED, "provider_message_id": None},
        {"status": SENT, "provider_message_id": "re_a_different_message"},
    ],
)
def test_tag_never_settles_a_row_that_is_not_waiting_for_an_answer(receive, make_outbox_row, outbox_row, columns):
    outbox_id = make_outbox_row(**columns)
    before = outbox_row(outbox_id)
    assert receive(event("email.delivered", email_id="re_new", outbox_id=outbox_id)) == "not_eligible"
    assert outbox_row(outbox_id) == before


def test_tag_naming_no_row_is_unmatched(receive):
    assert receive(event("email.delivered", email_id="re_x", outbox_id="inv_" + "0" * 32)) == "unmatched"


# --- one transaction ---------------------------------------------------------------------------


def test_failure_before_the_processed_marker_applies_nothing_then_redelivery_applies_once(
    receive, make_outbox_row, outbox_row, db, count
):
    outbox_id = make_outbox_row(status=SENT)
    with db.write() as conn:
        # The marker is the receipt's own row, written last (inserted processed, or completed).
        for when in ("INSERT", "UPDATE OF processed_at"):
            conn.exec_driver_sql(
                f'CREATE TRIGGER "fail_marker {when}" BEFORE {when} ON email_receipts '
                "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
            )
    with pytest.raises(ValueError, match="injected failure"):  # the driver's error for RAISE(ABORT)
        receive(event("email.bounced"), event_id="msg_bounce")
    assert outbox_row(outbox_id)["status"] == SENT
    assert (count("email_receipts"), count("email_suppressions"), count("email_suppression_events")) == (0, 0, 0)

    with db.write() as conn:
        for when in ("INSERT", "UPDATE OF processed_at"):
            conn.exec_driver_sql(f'DROP TRIGGER "fail_marker {when}"')
    assert receive(event("email.bounced"), event_id="msg_bounce") == "applied"
    assert receive(event("email.bounced"), event_id="msg_bounce") == "duplicate"
    assert outbox_row(outbox_id)["status"] == BOUNCED
    assert (count("email_receipts"), count("email_suppressions"), count("email_suppression_events")) == (1, 1, 1)


def test_exception_in_the_final_step_rolls_everything_back(receive, make_outbox_row, outbox_row, count, monkeypatch):
    outbox_id = make_outbox_row(status=DEAD_LETTER, provider_message_id=None, last_error=UNKNOWN_OUTCOME)

    def broken(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(receipts, "_mark_processed", broken)
    with pytest.raises(RuntimeError):
        receive(event("email.complained", email_id="re_1", outbox_id=outbox_id), event_id="msg_c")
    assert outbox_row(outbox_id)["provider_message_id"] is None
    assert count("email_receipts") == 0 and count("email_suppressions") == 0

    monkeypatch.undo()
    assert receive(event("email.complained", email_id="re_1", outbox_id=outbox_id), event_id="msg_c") == "applied"
    assert outbox_row(outbox_id)["status"] == COMPLAINED
    assert count("email_suppressions") == 1


def test_an_unprocessed_receipt_left_behind_is_completed_by_its_redelivery(receive, make_outbox_row, outbox_row, db):
    """Every statement after the insert is guarded by processed_at IS NULL, not by the insert's success."""
    outbox_id = make_outbox_row(status=SENT)
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO email_receipts (provider_event_id, type, received_at) "
                "VALUES ('msg_half', 'email.delivered', 'x')"
            )
        )
    assert receive(event("email.delivered"), event_id="msg_half") == "applied"
    assert outbox_row(outbox_id)["status"] == DELIVERED
