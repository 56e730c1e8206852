"""Report emails through the engine: their own retry policy, and a frozen payload (PDF included)
that replays byte-identical after a template change."""

import base64

from portal.core.clock import parse, utcnow
from portal.outbox.ground import rendering
from portal.outbox.ground.statuses import RETRY, SENT
from portal.report_emails.operations import run_due
from tests.reports.conftest import utc


def test_a_report_email_waits_minutes_to_hours_while_a_notice_keeps_the_settings_schedule(
    ctx, company, subscribe, report_rows, make_outbox_row, outbox_row, deliver, provider_model
):
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "monthly", since="2026-10-15T00:00:00.000000Z")
    run_due(ctx, now=utc("2026-11-02T00:00:00"))
    (report,) = report_rows()
    notice = make_outbox_row()

    provider_model.fail_next("http_500", count=2)
    assert deliver(report["id"]).startswith("retry:")
    assert deliver(notice).startswith("retry:")
    waits = {
        name: (parse(outbox_row(outbox_id)["next_attempt_at"]) - utcnow()).total_seconds()
        for name, outbox_id in (("report", report["id"]), ("notice", notice))
    }
    assert outbox_row(report["id"])["status"] == RETRY
    assert 200 <= waits["report"] <= 300, "first report retry: 5 minutes less jitter"
    assert waits["notice"] <= ctx.settings.outbox_retry_base_seconds, "the notice keeps OUTBOX_RETRY_BASE_SECONDS"


def test_frozen_report_email_with_its_pdf_replays_byte_identical_after_a_template_change(
    ctx, company, subscribe, report_rows, outbox_row, deliver, provider_model, monkeypatch, make_due
):
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "monthly", since="2026-10-15T00:00:00.000000Z")
    run_due(ctx, now=utc("2026-11-02T00:00:00"))
    (row,) = report_rows()

    provider_model.fail_next("drop_after_accept")
    assert deliver(row["id"]) == "retry:transport_failure"

    # A deploy changes the email layout (and every PDF would now be drawn anew) before the retry.
    original = rendering.render_bodies
    monkeypatch.setattr(
        "portal.outbox.ground.families.render_bodies",
        lambda template, context: tuple(b.replace("TEEI", "NEW-LAYOUT") for b in original(template, context)),
    )
    make_due(row["id"])
    assert deliver(row["id"], attempt=2) == "ack:sent"

    first, second = provider_model.requests()
    assert first["fingerprint"] == second["fingerprint"], "the retry carries the same HTTP body, attachment included"
    assert second["outcome"] == "replayed"
    (email,) = provider_model.sent()
    assert "NEW-LAYOUT" not in email["html"]
    (attachment,) = email["attachments"]
    assert base64.b64decode(attachment["content"]).startswith(b"%PDF")
    assert outbox_row(row["id"])["status"] == SENT
