"""LOG_FORMAT=json: one object a line, and one request ID from the web request to the worker."""

from __future__ import annotations

import json
import logging

from portal.core.log_context import ContextFilter, envelope_context, log_context
from portal.core.logs import configure_logging
from portal.outbox.ground.queues import build_envelope, email_queue


def test_json_lines_carry_the_ids_in_context(capsys):
    configure_logging("json")
    try:
        with log_context():  # no request, no row (as a worker's relay thread)
            with log_context(request_id="req-123", outbox_id="ntc_" + "a" * 32):
                logging.getLogger("portal.test").warning("delivery %s", "retried")
            logging.getLogger("portal.test").info("outside")
    finally:
        configure_logging("text")
    inside, outside = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert inside["message"] == "delivery retried" and inside["level"] == "WARNING"
    assert inside["request_id"] == "req-123" and inside["outbox_id"] == "ntc_" + "a" * 32
    assert outside["request_id"] is None and outside["outbox_id"] is None


def test_an_envelope_sets_the_context_only_with_safe_values():
    with envelope_context({"outboxId": "x\ny", "telemetry": {"requestId": 'quote"d'}}):
        record = logging.LogRecord("t", logging.INFO, __file__, 1, "m", (), None)
        ContextFilter().filter(record)
    assert record.request_id is None and record.outbox_id is None


def test_a_web_request_id_travels_in_the_envelope_of_its_emails(client, auth, make_user, ctx):
    """The manager's invitation: the answer's X-Request-ID is the envelope's telemetry.requestId."""
    manager = make_user("manager")
    auth.login(manager)
    token = auth.csrf_token("/invitations/new")
    answer = client.post(
        "/invitations/new",
        data={"emails": "dana@acme.example", "programme": "language", "csrf_token": token},
    )
    assert answer.status_code == 302
    request_id = answer.headers["X-Request-ID"]
    (job,) = email_queue(ctx.redis).get_jobs()
    assert job.args[0]["telemetry"] == {"requestId": request_id}
    assert job.args[0] == build_envelope(job.args[0]["outboxId"], request_id)
    # Each request has its own.
    assert client.get("/login").headers["X-Request-ID"] != request_id
