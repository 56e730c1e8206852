"""POST /api/attendance: signatures, replays, validation and limits, as a platform meets them."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from portal.attendance.queries import company_attendance, unmatched_sessions
from tests.attendance.conftest import session, sign

HEIDI = "heidi@acme.example"


@pytest.fixture
def acme(make_user, company_id):
    make_user("employee", company="Acme Ltd", email=HEIDI)
    return company_id("Acme Ltd")


def test_a_signed_delivery_counts_towards_the_company(post_attendance, db, acme):
    response = post_attendance([session(1), session(2, minutes=45, held_at="2026-11-10T18:00:00+01:00")])
    assert response.status_code == 200
    assert response.get_json() == {"received": 2, "applied": 2, "unmatched": 0, "stale": 0}
    assert company_attendance(db, company_id=acme).minutes == 105
    # The offset time is stored in UTC: 18:00+01:00 was 17:00Z.
    assert company_attendance(db, company_id=acme, held_from="2026-11-10T17:00:00.000000Z").minutes == 45


def test_a_bad_signature_is_refused_and_writes_nothing(post_attendance, db, acme, count):
    wrong = "whsec_" + "c29tZW9uZS1lbHNlcy1zZWNyZXQ="
    response = post_attendance([session()], secret=wrong)
    assert response.status_code == 401
    assert response.get_json() == {"error": "invalid_signature"}
    assert count("attendance_sessions") == 0 and count("attendance_deliveries") == 0


def test_missing_or_tampered_signature_headers_are_refused(client, settings, acme, count):
    body = json.dumps({"platform": "language", "sessions": [session()]})
    assert client.post("/api/attendance", data=body).status_code == 401
    headers = sign(settings.attendance_webhook_secret, body)
    tampered = body.replace('"minutes": 60', '"minutes": 600')
    assert client.post("/api/attendance", data=tampered, headers=headers).status_code == 401
    headers["webhook-signature"] = "v1,not-base64!!"
    assert client.post("/api/attendance", data=body, headers=headers).status_code == 401
    assert count("attendance_sessions") == 0


def test_a_timestamp_older_than_five_minutes_is_refused(post_attendance, acme, count):
    old = datetime.now(UTC) - timedelta(minutes=6)
    assert post_attendance([session()], timestamp=old).status_code == 401
    assert post_attendance([session()], timestamp=datetime.now(UTC) - timedelta(minutes=4)).status_code == 200
    assert count("attendance_sessions") == 1


def test_a_replayed_webhook_id_changes_nothing(post_attendance, db, acme, count):
    first = post_attendance([session(minutes=60)], webhook_id="msg_replayed")
    assert first.get_json()["applied"] == 1
    again = post_attendance([session(minutes=60)], webhook_id="msg_replayed")
    assert again.status_code == 200 and again.get_json() == first.get_json()
    assert company_attendance(db, company_id=acme).minutes == 60
    assert count("attendance_deliveries") == 1


def test_a_webhook_id_returning_with_another_body_is_409_and_changes_nothing(post_attendance, db, acme, count):
    post_attendance([session(minutes=60)], webhook_id="msg_reused")
    correction = post_attendance([session(minutes=90, updated_at="2026-11-04T09:00:00Z")], webhook_id="msg_reused")
    assert correction.status_code == 409 and correction.get_json()["error"] == "webhook_id_reused"
    assert company_attendance(db, company_id=acme).minutes == 60
    # The same correction under its own id is applied.
    assert post_attendance([session(minutes=90, updated_at="2026-11-04T09:00:00Z")]).get_json()["applied"] == 1
    assert company_attendance(db, company_id=acme).minutes == 90


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("session_id", "lang-\x001"),
        ("session_id", "lang-\x1b[31m"),
        ("session_id", "lang\u202e1"),
        ("volunteer_email", "heidi\u200b@acme.example"),
    ],
)
def test_control_and_invisible_characters_in_identifiers_are_refused(post_attendance, acme, count, field, value):
    response = post_attendance([session(1), session(2, **{field: value})])
    assert response.status_code == 400
    errors = response.get_json()["errors"]
    assert [e["index"] for e in errors] == [1] and field in errors[0]["reason"] and "invisible" in errors[0]["reason"]
    assert count("attendance_sessions") == 0


@pytest.mark.parametrize("body", ["{not json", "[]", '{"platform": "language"}', '{"sessions": {}}', "\xff"])
def test_a_body_that_is_not_a_sessions_object_is_400(post_attendance, body, count):
    response = post_attendance(body)
    assert response.status_code == 400
    assert response.get_json()["error"] == "malformed_body"
    assert count("attendance_deliveries") == 0


def test_each_bad_item_is_named_and_nothing_is_written(post_attendance, acme, count):
    items = [
        session(1),
        session(2, platform="knitting"),
        session(3, minutes=0),
        session(4, minutes=601),
        session(5, held_at="2026-11-03T17:00:00"),
        session(6, status="maybe"),
        session(7, updated_at="yesterday"),
        session(8, minutes="60"),
        "not an object",
        session(10, volunteer_email="nobody"),
    ]
    response = post_attendance(items)
    assert response.status_code == 400
    reasons = {e["index"]: e["reason"] for e in response.get_json()["errors"]}
    assert sorted(reasons) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert "platform" in reasons[1]
    assert "minutes" in reasons[2] and "minutes" in reasons[3] and "minutes" in reasons[7]
    assert "held_at has no time zone" in reasons[4]
    assert "status" in reasons[5]
    assert "updated_at" in reasons[6]
    assert "volunteer_email" in reasons[9] and "nobody" not in reasons[9]
    assert count("attendance_sessions") == 0 and count("attendance_deliveries") == 0


def test_an_unknown_platform_for_the_whole_request_names_every_item(post_attendance, count):
    response = post_attendance([session(1), session(2)], platform="yoga")
    assert response.status_code == 400
    assert [e["index"] for e in response.get_json()["errors"]] == [0, 1]
    assert count("attendance_sessions") == 0


def test_at_most_a_thousand_sessions_a_request(post_attendance, acme, count):
    too_many = post_attendance([session(n) for n in range(1001)])
    assert too_many.status_code == 400
    assert too_many.get_json()["errors"] == [{"index": 1000, "reason": "at most 1000 sessions a request"}]
    assert count("attendance_sessions") == 0
    assert post_attendance([session(n) for n in range(1000)]).get_json()["applied"] == 1000


def test_a_body_over_one_megabyte_is_413(post_attendance, count):
    padding = "x" * (1024 * 1024)
    response = post_attendance(json.dumps({"platform": "language", "sessions": [], "padding": padding}))
    assert response.status_code == 413
    assert response.get_json()["error"] == "too_large"
    assert count("attendance_deliveries") == 0


def test_unknown_volunteers_are_kept_and_counted_unmatched(post_attendance, db, acme):
    response = post_attendance([session(1), session(2, volunteer_email="Newcomer@Acme.example")])
    assert response.get_json() == {"received": 2, "applied": 2, "unmatched": 1, "stale": 0}
    assert unmatched_sessions(db) == 1
    assert company_attendance(db, company_id=acme).minutes == 60


def test_the_database_failing_is_503_not_500(post_attendance, db, acme):
    with db.write() as conn:
        conn.exec_driver_sql("DROP TABLE attendance_deliveries")
    response = post_attendance([session()])
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "30"


def test_logs_name_no_address_and_no_secret(post_attendance, settings, caplog, acme):
    post_attendance([session(volunteer_email="secret-person@acme.example", minutes=0)])
    post_attendance([session()], secret="whsec_" + "b3RoZXI=")
    text = caplog.text
    assert "secret-person" not in text and settings.attendance_webhook_secret not in text
    assert "attendance refused" in text


def test_the_mounted_api_app_declares_access_and_answers_only_its_route(app, client):
    from portal.attendance.app import create_api_app
    from portal.web.access import PUBLIC

    api = create_api_app(app.extensions["portal"])
    rules = {
        rule.rule: api.view_functions[rule.endpoint].access
        for rule in api.url_map.iter_rules()
        if rule.endpoint != "static"
    }
    assert rules == {"/attendance": PUBLIC}
    assert client.get("/api/attendance").status_code == 405
    assert client.post("/api/elsewhere").status_code == 404
