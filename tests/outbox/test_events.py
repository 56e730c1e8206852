"""Each outbox row's history (email_outbox_events): written with every state change, never rewritten,
free of personal data, and the console's list paged through indexes."""

from __future__ import annotations

import itertools

import pytest
import sqlalchemy as sa

from portal.core import clock
from portal.outbox.ground.queues import build_envelope
from portal.outbox.ground.statuses import ALL
from portal.outbox.operate import listing
from portal.outbox.operate.actions import ELIGIBLE, eligible_actions
from portal.outbox.operate.events import raw_events, timeline
from portal.outbox.operate.retention import purge
from portal.outbox.send.consumer import handle_message


def deliver(ctx, outbox_id, attempt=1, now=None):
    return handle_message(ctx, build_envelope(outbox_id), attempt=attempt, dead_letter=False, now=now or clock.utcnow())


def test_a_delivery_leaves_its_whole_history(ctx, make_outbox_row, provider_model, make_due):
    outbox_id = make_outbox_row(publish=True)
    provider_model.fail_next("http_500")
    assert deliver(ctx, outbox_id).startswith("retry:")
    make_due(outbox_id)
    assert deliver(ctx, outbox_id, attempt=2) == "ack:sent"

    history = [(e["kind"], e["status_before"], e["status_after"], e["attempt"]) for e in raw_events(ctx.db, outbox_id)]
    assert history[:4] == [
        ("created", None, "pending", 0),
        ("changed", "pending", "enqueued", 0),  # published
        ("changed", "enqueued", "processing", 1),  # claimed, and the payload frozen in the same statement
        ("changed", "processing", "retry", 1),
    ]
    assert [e["first_attempt"] for e in raw_events(ctx.db, outbox_id)][:4] == [0, 0, 1, 0]
    retry = next(e for e in raw_events(ctx.db, outbox_id) if e["status_after"] == "retry")
    assert retry["last_error"].startswith("provider_error: 500") and retry["outcome_unknown"] == 1
    assert history[-1][1:] == ("processing", "sent", 2)

    entries = timeline(ctx.db, {"id": outbox_id, "provider_message_id": None, "recipient": ""})
    # Codes and their values, no words: the console words them (tests/console/test_history_words.py).
    assert [entry.kind for entry in entries][:4] == ["written", "queued", "being_sent", "will_retry"]
    assert entries[-1].kind == "accepted" and entries[-1].attempt == 2 and entries[-1].message_id
    assert (entries[2].attempt, entries[2].content_fixed) == (1, True)  # claimed, and frozen in the same statement
    ended = entries[3]
    assert (ended.attempt, ended.reason, ended.outcome_unknown) == (1, "provider_error", True)
    assert ended.error.startswith("provider_error: 500") and ended.next_attempt_at
    again = next(entry for entry in entries[4:] if entry.kind == "being_sent")
    assert (again.attempt, again.content_fixed) == (2, False)


def test_an_operators_action_is_the_kind_of_its_entry():
    """Every action actions.py stores in a history event has a kind of its own."""
    from portal.outbox.operate.actions import ACTIONS
    from portal.outbox.operate.events import BY_OPERATOR, KINDS

    assert set(BY_OPERATOR) == set(ACTIONS)
    assert set(BY_OPERATOR.values()) <= set(KINDS)


def test_a_reason_code_is_read_from_what_last_error_stores():
    from portal.outbox.operate.events import reason_code

    assert reason_code("provider_error: 500 application_error") == "provider_error"
    assert reason_code("rate_limited: rate_limit_exceeded") == "rate_limited"
    assert reason_code("transport_failure") == "transport_failure"
    assert reason_code(None) is None and reason_code("") is None


def test_the_history_triggers_are_on_the_outbox_table(db):
    """A migration that rebuilds email_outbox (as 0014 did) drops its triggers: this notices."""
    with db.read() as conn:
        triggers = set(
            conn.execute(
                sa.text("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'email_outbox'")
            ).scalars()
        )
    assert triggers == {
        "email_outbox_events_on_insert",
        "email_outbox_events_on_change",
        "email_outbox_events_on_erase",
        "email_outbox_provider_key_on_insert",
    }


def test_a_change_that_rolls_back_leaves_no_event(ctx, make_outbox_row):
    outbox_id = make_outbox_row()
    before = len(raw_events(ctx.db, outbox_id))
    with pytest.raises(RuntimeError), ctx.db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET status = 'enqueued' WHERE id = :id"), {"id": outbox_id})
        raise RuntimeError("the transaction fails after the change")
    assert len(raw_events(ctx.db, outbox_id)) == before


def test_the_history_cannot_be_rewritten(ctx, make_outbox_row):
    outbox_id = make_outbox_row()
    for statement in (
        "UPDATE email_outbox_events SET status_after = 'sent' WHERE outbox_id = :id",
        "DELETE FROM email_outbox_events WHERE outbox_id = :id",
    ):
        with pytest.raises(Exception, match="append-only"), ctx.db.write() as conn:
            conn.execute(sa.text(statement), {"id": outbox_id})
    assert raw_events(ctx.db, outbox_id)[0]["status_after"] == "pending"


def test_the_purge_keeps_the_history_which_never_held_the_address(ctx, make_outbox_row):
    outbox_id = make_outbox_row(
        recipient="private.person@example.org",
        status="failed",
        provider_message_id=None,
        last_error="provider_rejected: 422 validation_error",
        updated_at="2000-01-01T00:00:00.000000Z",
    )
    assert purge(ctx.db, ctx.settings, now=clock.utcnow()).outbox_rows_erased == 1
    events = raw_events(ctx.db, outbox_id)
    assert [e["kind"] for e in events] == ["created", "changed", "erased"]
    assert not any("private.person" in str(value) for event in events for value in event.values())


def test_the_actions_offered_are_exactly_those_the_engine_allows(ctx, make_outbox_row):
    """eligible_actions (the page's buttons) and ELIGIBLE (the guarded UPDATEs) agree on every kind of row."""
    counter = itertools.count()
    rows = {}
    for status, unknown, attempted, message in itertools.product(ALL, (0, 1), (False, True), (False, True)):
        n = next(counter)
        rows[n] = make_outbox_row(
            status=status,
            outcome_unknown=unknown,
            first_attempt_at=clock.now_iso() if attempted else None,
            provider_message_id=f"re_{n}" if message else None,
        )
    with ctx.db.read() as conn:
        by_sql = {
            action: set(
                conn.execute(
                    sa.text(f"SELECT id FROM email_outbox WHERE {condition}"),
                ).scalars()
            )
            for action, condition in ELIGIBLE.items()
        }
        full_rows = [dict(r) for r in conn.execute(sa.text("SELECT * FROM email_outbox")).mappings()]
    by_python = {action: {r["id"] for r in full_rows if action in eligible_actions(r)} for action in ELIGIBLE}
    assert by_python == by_sql
    assert all(by_sql.values()), "every action is allowed on some row"


@pytest.mark.parametrize(
    "filters",
    [
        listing.OutboxFilter(),
        listing.OutboxFilter(status="dead_letter"),
        listing.OutboxFilter(family="notice"),
        listing.OutboxFilter(status="dead_letter", family="notice"),
        listing.OutboxFilter(created_from="2026-01-01T00:00:00.000000Z", created_before="2026-02-01T00:00:00.000000Z"),
    ],
)
def test_the_console_pages_through_an_index_without_sorting(ctx, filters):
    """A page is an index range at any size: no scan of the table, no sort of what matched."""
    where, params = filters.where()
    for keyset in (False, True):
        with ctx.db.read() as conn:
            plan = " | ".join(
                str(row[-1])
                for row in conn.execute(
                    sa.text("EXPLAIN QUERY PLAN " + listing.page_query(where, keyset)),
                    {**params, "cursor_at": "x", "cursor_id": "y", "limit": 51},
                )
            )
        assert "USING INDEX email_outbox_console" in plan, plan
        assert not keyset or "SEARCH email_outbox" in plan, plan
        assert "TEMP B-TREE" not in plan, plan


def test_receipts_and_suppressions_join_the_history(ctx, make_outbox_row, outbox_row):
    """A bounce receipt moves the row, puts the address on the suppression list, and both show."""
    import json
    import uuid

    from portal.outbox.hear.receipts import apply_receipt_event
    from tests.builders import event

    outbox_id = make_outbox_row(recipient="ada@example.com", status="sent", provider_message_id="re_msg_1")
    body = json.dumps(event("email.bounced", email_id="re_msg_1", to="ada@example.com", outbox_id=outbox_id))
    apply_receipt_event(
        ctx.db, f"msg_{uuid.uuid4().hex}", body.encode(), environment=ctx.settings.portal_env, now=clock.utcnow()
    )
    assert outbox_row(outbox_id)["status"] == "bounced"

    entries = timeline(ctx.db, outbox_row(outbox_id))
    assert any(entry.kind == "receipt" and entry.receipt_type == "email.bounced" for entry in entries)
    assert any(entry.kind == "status_from_receipt" and entry.status == "bounced" for entry in entries)
    added = next(entry for entry in entries if entry.kind == "suppression_added")
    assert added.by_provider and added.note


def test_a_receipt_its_tag_matched_but_could_not_apply_is_in_the_history(ctx, make_outbox_row, outbox_row):
    """A row that failed for good, then a receipt tagged with its outbox_id: the row keeps its status
    and has no message ID, and the page still shows the receipt (and no other row's)."""
    import json
    import uuid

    from portal.outbox.hear.receipts import NOT_ELIGIBLE, apply_receipt_event
    from tests.builders import event

    failed = make_outbox_row(status="failed", provider_message_id=None)
    other = make_outbox_row(status="failed", provider_message_id=None)
    for outbox_id, email_id in ((failed, "re_unknown_to_us"), (other, "re_someone_else")):
        body = json.dumps(event("email.delivered", email_id=email_id, outbox_id=outbox_id)).encode()
        outcome = apply_receipt_event(
            ctx.db, f"msg_{uuid.uuid4().hex}", body, environment=ctx.settings.portal_env, now=clock.utcnow()
        )
        assert outcome == NOT_ELIGIBLE

    entries = [entry for entry in timeline(ctx.db, outbox_row(failed)) if entry.kind == "receipt"]
    assert [(entry.receipt_type, entry.receipt_outcome) for entry in entries] == [("email.delivered", "not_eligible")]


def test_the_receipts_of_a_row_are_read_through_indexes(db):
    from portal.outbox.operate.events import _RECEIPTS

    with db.read() as conn:
        rows = conn.execute(sa.text("EXPLAIN QUERY PLAN " + _RECEIPTS.text), {"id": "row_1", "message_id": "re_1"})
        plan = " ".join(row[3] for row in rows)
    assert "SCAN email_receipts" not in plan, plan
    assert plan.count("SEARCH email_receipts USING INDEX") == 2, plan
