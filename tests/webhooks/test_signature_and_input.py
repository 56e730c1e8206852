"""The receipt endpoint refuses what it cannot verify and never answers 500, whatever it is sent."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.builders import event, sign

OTHER_SECRET = "whsec_b3RoZXItc2VjcmV0LW5vdC1vdXJzLWF0LWFsbA=="
FUZZ = hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_signed_receipt_is_accepted(post_receipt, make_outbox_row, outbox_row, count):
    outbox_id = make_outbox_row(status="sent", provider_message_id="re_msg_1")
    response = post_receipt(event(email_id="re_msg_1"), event_id="msg_a")
    assert response.status_code == 200
    assert response.json == {"outcome": "applied"}
    assert count("email_receipts") == 1
    assert outbox_row(outbox_id)["status"] == "delivered"
    again = post_receipt(event(email_id="re_msg_1"), event_id="msg_a")
    assert again.status_code == 200 and again.json == {"outcome": "duplicate"}, "a redelivery is acknowledged"


def test_receipt_from_another_environment_is_acknowledged(post_receipt, count):
    response = post_receipt(event(environment="staging"))
    assert response.status_code == 200 and response.json == {"outcome": "other_environment"}
    assert count("email_receipts") == 1


def test_a_receipt_the_database_cannot_take_is_503_and_its_redelivery_applies(post_receipt, make_outbox_row, db, count):
    make_outbox_row(status="sent", provider_message_id="re_msg_1")
    with db.write() as conn:
        # The receipt's own row is written last (inserted processed, or completed): fail that step.
        for when in ("INSERT", "UPDATE OF processed_at"):
            conn.exec_driver_sql(
                f'CREATE TRIGGER "fail_marker {when}" BEFORE {when} ON email_receipts '
                "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
            )
    failed = post_receipt(event("email.bounced"), event_id="msg_bounce")
    assert failed.status_code == 503 and failed.headers["Retry-After"]
    assert count("email_receipts") == 0

    with db.write() as conn:
        for when in ("INSERT", "UPDATE OF processed_at"):
            conn.exec_driver_sql(f'DROP TRIGGER "fail_marker {when}"')
    assert post_receipt(event("email.bounced"), event_id="msg_bounce").json == {"outcome": "applied"}


def test_an_exception_while_applying_is_503_not_500(post_receipt, make_outbox_row, count, monkeypatch):
    from portal.outbox.hear import receipts

    make_outbox_row(status="sent", provider_message_id="re_msg_1")
    monkeypatch.setattr(receipts, "_mark_processed", lambda *args, **kwargs: 1 / 0)
    response = post_receipt(event("email.complained"), event_id="msg_c")
    assert response.status_code == 503 and response.headers["Retry-After"]
    assert count("email_receipts") == 0


@pytest.mark.parametrize("missing", ["svix-id", "svix-timestamp", "svix-signature"])
def test_missing_signature_header_is_401(client, settings, count, missing):
    body = json.dumps(event())
    headers = sign(settings.resend_webhook_secret, body)
    del headers[missing]
    response = client.post("/webhooks/resend", data=body, headers=headers)
    assert response.status_code == 401
    assert count("email_receipts") == 0


def test_no_headers_at_all_is_401(client, count):
    assert client.post("/webhooks/resend", json=event()).status_code == 401
    assert count("email_receipts") == 0


def test_signature_with_another_secret_is_401(post_receipt, count):
    assert post_receipt(event(), secret=OTHER_SECRET).status_code == 401
    assert count("email_receipts") == 0


def test_body_changed_after_signing_is_401(client, settings, count):
    body = json.dumps(event())
    headers = sign(settings.resend_webhook_secret, body)
    tampered = body.replace("ada@example.com", "eve@example.com")
    assert client.post("/webhooks/resend", data=tampered, headers=headers).status_code == 401
    assert count("email_receipts") == 0


def test_signature_for_another_event_id_is_401(client, settings, count):
    body = json.dumps(event())
    headers = sign(settings.resend_webhook_secret, body, message_id="msg_original")
    headers["svix-id"] = "msg_replayed_under_a_new_id"
    assert client.post("/webhooks/resend", data=body, headers=headers).status_code == 401
    assert count("email_receipts") == 0


@pytest.mark.parametrize("offset", [timedelta(minutes=-6), timedelta(minutes=6), timedelta(days=-400)])
def test_timestamp_more_than_five_minutes_off_is_401(post_receipt, count, offset):
    response = post_receipt(event(), timestamp=datetime.now(UTC) + offset)
    assert response.status_code == 401
    assert count("email_receipts") == 0


def test_timestamp_within_five_minutes_is_accepted(post_receipt):
    assert post_receipt(event(), timestamp=datetime.now(UTC) - timedelta(minutes=4)).status_code == 200


@pytest.mark.parametrize(
    "signature",
    [
        "v1",  # no comma: svix raises a plain ValueError
        "v1,not base64!!",  # binascii.Error
        "v1,a,b",  # too many parts
        "v2,AAAA",  # an unknown version only
        "",
    ],
)
def test_malformed_signature_header_is_401(client, settings, count, signature):
    body = json.dumps(event())
    headers = sign(settings.resend_webhook_secret, body)
    headers["svix-signature"] = signature
    assert client.post("/webhooks/resend", data=body, headers=headers).status_code == 401
    assert count("email_receipts") == 0


@pytest.mark.parametrize("timestamp", ["yesterday", "nan", "1e400", "-1", ""])
def test_malformed_timestamp_header_is_401(client, settings, count, timestamp):
    body = json.dumps(event())
    headers = sign(settings.resend_webhook_secret, body)
    headers["svix-timestamp"] = timestamp
    assert client.post("/webhooks/resend", data=body, headers=headers).status_code == 401
    assert count("email_receipts") == 0


def test_one_good_signature_among_several_is_enough(client, settings):
    body = json.dumps(event())
    headers = sign(settings.resend_webhook_secret, body)
    headers["svix-signature"] = "v1,AAAA " + headers["svix-signature"]  # secret rotation sends two
    assert client.post("/webhooks/resend", data=body, headers=headers).status_code == 200


def test_undecodable_body_is_401_not_500(client, count):
    response = client.post(
        "/webhooks/resend",
        data=b"\xff\xfe\x00garbage",
        headers={"svix-id": "msg_1", "svix-timestamp": "1", "svix-signature": "v1,AAAA"},
    )
    assert response.status_code == 401
    assert count("email_receipts") == 0


@pytest.mark.parametrize(
    "body", ["{not json", "", "[1, 2]", '"text"', "null", '{"data": {}}', '{"type": 7}', "[" * 50_000 + "]" * 50_000]
)
def test_signed_but_malformed_body_is_400_and_writes_nothing(post_receipt, count, body):
    response = post_receipt(body)
    assert response.status_code == 400
    assert count("email_receipts") == 0


def test_body_over_the_size_limit_is_413(post_receipt, count):
    response = post_receipt(json.dumps({"type": "email.sent", "padding": "x" * (1024 * 1024)}))
    assert response.status_code == 413
    assert count("email_receipts") == 0


def test_get_is_not_allowed(client):
    assert client.get("/webhooks/resend").status_code == 405


def test_refusals_do_not_log_the_body(client, caplog):
    client.post(
        "/webhooks/resend",
        data=json.dumps(event(to="secret-person@example.com")),
        headers={"svix-id": "msg_1", "svix-timestamp": "1", "svix-signature": "v1,AAAA"},
    )
    assert "secret-person" not in caplog.text


# --- fuzzing -----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
# Bodies that look like receipts, with any field replaced by anything.
receipt_like = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "email.sent",
                "email.delivered",
                "email.bounced",
                "email.complained",
                "email.delivery_delayed",
                "email.opened",
            ]
        )
        | json_values
    },
    optional={
        "created_at": st.sampled_from(
            ["2026-10-15T09:30:00.000Z", "2026-10-15", "0001-01-01T00:00:00", "9999-12-31T23:59:59+14:00", ""]
        )
        | json_values,
        "data": st.fixed_dictionaries(
            {},
            optional={
                "email_id": st.sampled_from(["re_msg_1", ""]) | json_values,
                "to": st.lists(
                    st.sampled_from(["ada@example.com", "Ada <ADA@Example.com>", "no-at-sign", ""]) | json_values,
                    max_size=2,
                )
                | json_values,
                "tags": st.dictionaries(
                    st.sampled_from(["environment", "outbox_id", "family"]),
                    st.sampled_from(["development", "staging", "inv_1"]) | json_values,
                )
                | json_values,
                "bounce": st.fixed_dictionaries(
                    {}, optional={"type": st.sampled_from(["Permanent", "Transient"]) | json_values}
                )
                | json_values,
            },
        )
        | json_values,
    },
)


@FUZZ
@given(
    body=st.binary(max_size=300),
    headers=st.dictionaries(
        st.sampled_from(["svix-id", "svix-timestamp", "svix-signature"]),
        st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60),
    ),
)
def test_fuzzed_unsigned_requests_are_refused_and_write_nothing(client, count, body, headers):
    response = client.post("/webhooks/resend", data=body, headers=headers)
    assert response.status_code == 401
    assert count("email_receipts") == 0
    assert count("email_suppressions") == 0


@pytest.fixture
def rows_the_fuzz_can_hit(make_outbox_row):
    from portal.outbox.ground.statuses import DEAD_LETTER, UNKNOWN_OUTCOME

    make_outbox_row(status="sent", provider_message_id="re_msg_1")
    make_outbox_row(id="inv_1", provider_message_id=None, status=DEAD_LETTER, last_error=UNKNOWN_OUTCOME)


@FUZZ
@given(payload=receipt_like | json_values)
def test_fuzzed_signed_bodies_never_answer_500(post_receipt, rows_the_fuzz_can_hit, payload):
    response = post_receipt(json.dumps(payload), event_id=f"msg_{uuid.uuid4().hex}")
    assert response.status_code in (200, 400), response.get_data(as_text=True)


@FUZZ
@given(text=st.text(max_size=200))
def test_fuzzed_signed_text_never_answers_500(post_receipt, text):
    response = post_receipt(text, event_id=f"msg_{uuid.uuid4().hex}")
    assert response.status_code in (200, 400)
