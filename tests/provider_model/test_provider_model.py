"""The provider model, driven over real HTTP through the real resend SDK."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
import resend
from resend.exceptions import ResendError

from devtools.provider_model import ProviderModel
from devtools.testing import wait_until


def send(params, key=None):
    return resend.Emails.send(params, {"idempotency_key": key} if key else None)


def wait_for(predicate, timeout=5.0):
    if not wait_until(predicate, timeout=timeout, interval=0.01):
        raise AssertionError("condition not met in time")


# --- accepting and replaying -------------------------------------------------------------------


def test_send_is_recorded_and_retrievable(model, message):
    answer = send(message(), key="invitation/1")

    [email] = model.sent()
    assert email["id"] == answer["id"]
    assert email["to"] == ["ada@example.com"]
    assert email["tags"] == message()["tags"]
    assert email["idempotency_key"] == "invitation/1"

    fetched = resend.Emails.get(answer["id"])
    assert fetched["object"] == "email"
    assert fetched["id"] == answer["id"]
    assert fetched["subject"] == "You are invited to volunteer"
    assert fetched["html"] == "<p>Hello Ada</p>"
    assert fetched["last_event"] == "delivered"  # the provider's own record, webhook or not


def test_unknown_email_is_404(model):
    with pytest.raises(ResendError) as caught:
        resend.Emails.get("no-such-id")
    assert (caught.value.code, caught.value.error_type) == (404, "not_found")


def test_same_key_and_body_replays_the_original_answer(model, message):
    first = send(message(), key="k")
    second = send(message(), key="k")

    assert second["id"] == first["id"]
    assert len(model.sent()) == 1
    assert [r["outcome"] for r in model.requests()] == ["sent", "replayed"]


def test_same_key_with_a_different_body_is_a_payload_conflict(model, message):
    send(message(), key="k")
    with pytest.raises(ResendError) as caught:
        send(message(subject="A new layout"), key="k")

    assert (caught.value.code, caught.value.error_type) == (409, "invalid_idempotent_request")
    assert len(model.sent()) == 1


def test_same_key_while_the_first_is_in_flight_is_a_concurrency_conflict(model, message):
    model.fail_next("slow_accept", delay=1.0)
    first = {}
    worker = threading.Thread(target=lambda: first.update(send(message(), key="k")))
    worker.start()
    wait_for(lambda: any(r["outcome"] == "in_flight" for r in model.requests()))
    time.sleep(0.2)  # a request is logged a moment before its key is reserved; slow_accept holds 1s

    with pytest.raises(ResendError) as caught:
        send(message(), key="k")
    worker.join()

    assert (caught.value.code, caught.value.error_type) == (409, "concurrent_idempotent_requests")
    assert [e["id"] for e in model.sent()] == [first["id"]]
    # Once the first request settles, a retry gets its answer.
    assert send(message(), key="k")["id"] == first["id"]


def test_key_is_forgotten_once_the_window_has_passed(model, message):
    first = send(message(), key="k")
    model.advance_clock(86400 - 1)
    assert send(message(), key="k")["id"] == first["id"]

    model.advance_clock(1)
    second = send(message(), key="k")

    assert second["id"] != first["id"]
    assert len(model.sent()) == 2


def test_clock_moves_created_at(model, message):
    model.advance_clock(3 * 86400)
    send(message())
    created = model.sent()[0]["created_at"]
    assert created > time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 2 * 86400))


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tag",
    [
        {"name": "environment", "value": "dev server"},
        {"name": "fam.ily", "value": "invitation"},
        {"name": "family", "value": "ünïcode"},
        {"name": "family", "value": ""},
        {"name": "family"},
    ],
)
def test_bad_tags_are_422(model, message, tag):
    with pytest.raises(ResendError) as caught:
        send(message(tags=[tag]), key="k")
    assert (caught.value.code, caught.value.error_type) == (422, "validation_error")
    assert model.sent() == []


@pytest.mark.parametrize("field", ["subject", "from", "to"])
def test_missing_required_field_is_422(model, message, field):
    params = message()
    del params[field]
    with pytest.raises(ResendError) as caught:
        send(params)
    assert (caught.value.code, caught.value.error_type) == (422, "missing_required_field")


def test_body_without_html_or_text_is_422(model, message):
    params = message()
    del params["html"], params["text"]
    with pytest.raises(ResendError) as caught:
        send(params)
    assert (caught.value.code, caught.value.error_type) == (422, "validation_error")


def test_too_many_recipients_is_422(model, message):
    with pytest.raises(ResendError) as caught:
        send(message(to=[f"p{i}@example.com" for i in range(51)]))
    assert (caught.value.code, caught.value.error_type) == (422, "validation_error")


def test_rejected_request_does_not_store_its_key(model, message):
    with pytest.raises(ResendError):
        send(message(subject=None), key="k")
    answer = send(message(), key="k")
    assert [e["id"] for e in model.sent()] == [answer["id"]]


def test_malformed_json_is_400(model):
    response = requests.post(
        f"{model.url}/emails",
        data=b"{not json",
        headers={"Authorization": "Bearer re_test", "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["name"] == "validation_error"
    assert model.requests()[0]["outcome"] == "invalid"


@pytest.mark.parametrize("authorization", [None, "Bearer ", "Basic abc"])
def test_missing_api_key_is_401(model, message, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    response = requests.post(f"{model.url}/emails", json=message(), headers=headers)
    assert response.status_code == 401
    assert response.json() == {
        "statusCode": 401,
        "name": "missing_api_key",
        "message": "Missing API key in the authorization header.",
    }


def test_unset_sdk_key_is_refused(model, message):
    resend.api_key = None  # the SDK then sends "Bearer None"; the fixture restores the key
    with pytest.raises(ResendError) as caught:
        send(message())
    assert (caught.value.code, caught.value.error_type) == (403, "invalid_api_key")


def test_overlong_idempotency_key_is_400(model, message):
    with pytest.raises(ResendError) as caught:
        send(message(), key="k" * 257)
    assert (caught.value.code, caught.value.error_type) == (400, "invalid_idempotency_key")


# --- injected faults ---------------------------------------------------------------------------


def test_500_fault_is_an_application_error_and_stores_no_key(model, message):
    model.fail_next("http_500")
    with pytest.raises(ResendError) as caught:
        send(message(), key="k")
    assert caught.value.code == 500
    assert model.sent() == []

    answer = send(message(subject="Rendered again"), key="k")
    assert [e["id"] for e in model.sent()] == [answer["id"]]
    assert [r["outcome"] for r in model.requests()] == ["fault_500", "sent"]


def test_429_fault_carries_retry_after(model, message):
    model.fail_next("http_429", retry_after=7)
    with pytest.raises(ResendError) as caught:
        send(message(), key="k")

    assert (caught.value.code, caught.value.error_type) == (429, "rate_limit_exceeded")
    headers = {name.lower(): value for name, value in caught.value.headers.items()}
    assert headers["retry-after"] == "7"
    assert model.sent() == []


def test_fault_count_fails_that_many_requests(model, message):
    model.fail_next("http_500", count=2)
    for _ in range(2):
        with pytest.raises(ResendError):
            send(message())
    send(message())
    assert [r["status"] for r in model.requests()] == [500, 500, 200]


def test_drop_after_accept_sends_and_loses_the_answer(model, message):
    model.fail_next("drop_after_accept")
    with pytest.raises(ResendError) as caught:
        send(message(), key="k")

    assert caught.value.error_type == "HttpClientError"
    [email] = model.sent()
    [entry] = model.requests()
    assert (entry["status"], entry["outcome"], entry["message_id"]) == ("dropped", "dropped_after_accept", email["id"])

    retry = send(message(), key="k")
    assert retry["id"] == email["id"]
    assert len(model.sent()) == 1


def test_unknown_fault_mode_is_refused(model):
    with pytest.raises(ValueError):
        model.fail_next("http_418")


# --- inspection and controls -------------------------------------------------------------------


def test_fingerprint_is_of_the_exact_body(model, message):
    send(message())
    send(message())
    send(message(text="Hello Ada, again"))

    first, second, third = (r["fingerprint"] for r in model.requests())
    assert first == second != third
    assert model.sent()[0]["fingerprint"] == first
    assert re.fullmatch(r"[0-9a-f]{64}", first)


def test_reset_forgets_everything(model, message):
    send(message(), key="k")
    model.fail_next("http_500")
    model.advance_clock(10 * 86400)
    model.reset()

    assert model.sent() == [] and model.requests() == []
    answer = send(message(subject="After the reset"), key="k")  # neither fault nor conflict
    assert model.sent()[0]["id"] == answer["id"]
    assert model.sent()[0]["created_at"] < time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 60))


def test_controls_over_http(model, message):
    assert requests.post(f"{model.url}/_model/faults", json={"mode": "http_429", "retry_after": 3}).json() == {
        "ok": True
    }
    with pytest.raises(ResendError) as caught:
        send(message())
    assert caught.value.code == 429

    send(message(), key="k")
    assert requests.post(f"{model.url}/_model/clock", json={"advance_seconds": 86400}).ok
    send(message(), key="k")
    assert len(requests.get(f"{model.url}/_model/sent").json()) == 2
    outcomes = [r["outcome"] for r in requests.get(f"{model.url}/_model/requests").json()]
    assert outcomes == ["fault_429", "sent", "sent"]

    assert requests.post(f"{model.url}/_model/reset").ok
    assert requests.get(f"{model.url}/_model/sent").json() == []

    refused = requests.post(f"{model.url}/_model/faults", json={"mode": "nonsense"})
    assert refused.status_code == 400 and "nonsense" in refused.json()["error"]


# --- the mail viewer ---------------------------------------------------------------------------


def test_viewer_lists_sent_mail_newest_first_and_escapes(model, message):
    send(message(subject="Older one"))
    answer = send(message(subject="<b>Bold</b> & more", html="<script>alert(1)</script><p>Hi</p>"), key="inv/<1>")

    index = requests.get(f"{model.url}/")
    assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
    assert "&lt;b&gt;Bold&lt;/b&gt; &amp; more" in index.text
    assert "<b>Bold</b>" not in index.text
    assert "inv/&lt;1&gt;" in index.text
    assert f'href="/view/{answer["id"]}"' in index.text
    assert index.text.index("Bold") < index.text.index("Older one")

    page = requests.get(f"{model.url}/view/{answer['id']}").text
    assert "<script>" not in page
    assert 'srcdoc="&lt;base target=&quot;_blank&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;' in page
    assert re.search(r"<iframe[^>]* sandbox=\"[^\"]*\"", page)
    assert "allow-scripts" not in page
    assert "<pre>Hello Ada</pre>" in page

    assert requests.get(f"{model.url}/view/missing").status_code == 404


# --- lifecycle and the command line ------------------------------------------------------------


def test_stop_closes_the_socket():
    model = ProviderModel(port=0).start()
    url = model.url
    model.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(url, timeout=2)


def test_command_line_prints_its_url_and_stops_on_sigterm():
    repo = Path(__file__).resolve().parents[2]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "devtools.provider_model",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--window-seconds",
            "60",
        ],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
    try:
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
        assert requests.get(f"{url}/_model/sent", timeout=5).json() == []
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


# --- the suppression list: pages, the rate limit, faults ----------------------------------------


def test_the_suppression_list_is_paged_oldest_first_as_resend_documents_it(model):
    ids = [model.suppress(f"person{n}@example.com")["id"] for n in range(5)]
    whole = resend.Suppressions.list()  # no limit: every entry at once
    assert ([e["id"] for e in whole["data"]], whole["has_more"]) == (ids, False)
    first = resend.Suppressions.list({"limit": 2})
    second = resend.Suppressions.list({"limit": 2, "after": first["data"][-1]["id"]})
    last = resend.Suppressions.list({"limit": 2, "after": second["data"][-1]["id"]})
    assert [[e["id"] for e in page["data"]] for page in (first, second, last)] == [ids[:2], ids[2:4], ids[4:]]
    assert [page["has_more"] for page in (first, second, last)] == [True, True, False]
    back = resend.Suppressions.list({"limit": 2, "before": ids[4]})
    assert ([e["id"] for e in back["data"]], back["has_more"]) == (ids[2:4], True)
    assert all(e["object"] == "suppression" for e in whole["data"])
    with pytest.raises(ResendError) as refused:
        resend.Suppressions.list({"limit": 101})
    assert refused.value.code == 422


def test_a_suppression_fault_can_meet_a_later_page_and_counts_against_the_rate_limit():
    limited = ProviderModel(port=0, rate_limit_per_second=2).start()
    saved = resend.api_key, resend.api_url
    resend.api_key, resend.api_url = "re_test", limited.url
    try:
        for n in range(3):
            limited.suppress(f"person{n}@example.com")
        limited.fail_next("http_429", path="/suppressions", skip=1)
        assert len(resend.Suppressions.list({"limit": 2})["data"]) == 2  # the first page passes
        with pytest.raises(ResendError) as busy:
            resend.Suppressions.list({"limit": 2})
        assert busy.value.code == 429
        with pytest.raises(ResendError) as over:  # two requests this second already
            resend.Suppressions.list({"limit": 2})
        assert over.value.code == 429
    finally:
        resend.api_key, resend.api_url = saved
        limited.stop()
