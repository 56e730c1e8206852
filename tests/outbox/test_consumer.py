"""The consumer's one decision per message, and the recogniser behind it."""

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from portal.core import clock
from portal.email_families import FAMILIES
from portal.outbox.ground.queues import build_envelope, is_valid_envelope
from portal.outbox.ground.statuses import DEAD_LETTER, DELIVERY_EXHAUSTED, FAILED, OUTBOX_ID_UNCLAIMED
from portal.outbox.send.consumer import handle_message


def test_invalid_envelopes_are_acknowledged_without_touching_the_database(
    ctx, make_outbox_row, outbox_rows, provider_model
):
    outbox_id = make_outbox_row(publish=True)
    before = outbox_rows()
    for body in [
        None,
        "text",
        [],
        {},
        {"kind": "email-outbox", "version": 2, "outboxId": outbox_id},
        {"kind": "other", "version": 1, "outboxId": outbox_id},
        {"kind": "email-outbox", "version": 1, "outboxId": 42},
        {"kind": "email-outbox", "version": 1, "outboxId": outbox_id, "recipient": "a@b.example"},
    ]:
        assert handle_message(ctx, body, attempt=1, dead_letter=False, now=clock.utcnow()) == "ack:invalid_envelope"
    assert outbox_rows() == before
    assert provider_model.requests() == []


def test_unrecognised_id_fails_its_row_before_acknowledging(ctx, make_outbox_row, outbox_row, provider_model):
    # A row whose ID carries a character the recogniser rejects (the article's incident).
    odd_id = make_outbox_row(status="enqueued", provider_message_id=None, id="ntc-0123456789abcdef0123456789abcdef")
    assert (
        handle_message(ctx, build_envelope(odd_id), attempt=1, dead_letter=False, now=clock.utcnow())
        == "ack:outbox_id_unclaimed"
    )
    row = outbox_row(odd_id)
    assert row["status"] == FAILED and row["last_error"] == OUTBOX_ID_UNCLAIMED
    assert provider_model.requests() == []


def test_unrecognised_id_is_retried_when_the_failed_write_fails(ctx, make_outbox_row, outbox_row):
    odd_id = make_outbox_row(status="enqueued", provider_message_id=None, id="zzz_0123456789abcdef0123456789abcdef")
    with ctx.db.write() as conn:
        conn.exec_driver_sql("CREATE TRIGGER refuse BEFORE UPDATE ON email_outbox BEGIN SELECT RAISE(ABORT, 'x'); END")
    assert handle_message(ctx, build_envelope(odd_id), attempt=1, dead_letter=False, now=clock.utcnow()).startswith(
        "retry:"
    )
    assert outbox_row(odd_id)["status"] == "enqueued"
    assert ctx.redis.zcard("rq:scheduled:email") == 1


def test_dead_letter_queue_hands_the_row_to_its_final_state(ctx, make_outbox_row, outbox_row, provider_model):
    outbox_id = make_outbox_row(publish=True)
    assert (
        handle_message(ctx, build_envelope(outbox_id), attempt=0, dead_letter=True, now=clock.utcnow())
        == "ack:dead_letter"
    )
    row = outbox_row(outbox_id)
    assert row["status"] == DEAD_LETTER and row["last_error"] == DELIVERY_EXHAUSTED
    assert provider_model.requests() == []


def test_exhausted_attempts_go_to_the_dead_letter_queue(ctx, make_outbox_row, provider_model):
    from portal.outbox.ground.queues import DEAD_LETTER_QUEUE, dead_letter_queue

    outbox_id = make_outbox_row()
    provider_model.fail_next("http_500")
    last = ctx.settings.outbox_max_attempts
    assert handle_message(
        ctx, build_envelope(outbox_id), attempt=last, dead_letter=False, now=clock.utcnow()
    ).startswith("retry:")
    jobs = dead_letter_queue(ctx.redis).get_jobs()
    assert [list(job.args) for job in jobs] == [[build_envelope(outbox_id)]]
    assert jobs[0].origin == DEAD_LETTER_QUEUE


def test_every_registered_family_recognises_the_ids_it_builds():
    families = list(FAMILIES)
    assert {f.name for f in families} >= {
        "invitation",
        "application_received",
        "application_decision",
        "demo_confirmation",
        "demo_notification",
        "notice",
    }
    for family in families:
        assert FAMILIES.for_outbox_id(family.new_outbox_id()) is family, family.name


@given(family=st.sampled_from(list(FAMILIES)), request_id=st.text(max_size=20))
@hypothesis_settings(max_examples=200, deadline=None)
def test_every_id_a_family_builds_is_recognised(family, request_id):
    built = family.new_outbox_id()
    assert FAMILIES.for_outbox_id(built) is family
    assert is_valid_envelope(build_envelope(built, request_id or None))


@given(st.text(max_size=60))
def test_arbitrary_text_is_never_mistaken_for_an_outbox_id(text):
    family = FAMILIES.for_outbox_id(text)
    if family is not None:
        assert text.startswith(family.id_prefix + "_") and len(text) == 36
