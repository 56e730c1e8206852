"""The report email's body hides what its attached filing PDF hides."""

from __future__ import annotations

import base64
import io

from pypdf import PdfReader

from portal.report_emails.operations import run_due

from .test_schedule_runs import Row, oslo, utc


def test_the_email_body_hides_what_its_attachment_hides(
    ctx, company, insert_sessions, subscribe, report_rows, deliver, provider_model
):
    company_id, manager, people = company("Acme Ltd", employees=8)
    insert_sessions(
        [Row("language", uid, company_id, oslo("2026-03-03T18:00:00"), 60) for uid in people[:3]]
        + [Row("mentorship", people[3], company_id, oslo("2026-03-05T18:00:00"), 90)]
    )
    subscribe(manager, "monthly", since="2026-03-15T00:00:00.000000Z")
    run_due(ctx, now=utc("2026-04-01T06:00:00"))
    (row,) = report_rows()
    assert deliver(row["id"]) == "ack:sent"
    (email,) = provider_model.sent()
    # 4 volunteers in all, one of them in Mentorship: no figure of the month may be stated.
    assert "Active volunteers: hidden" in email["text"] and "Active volunteers: 4" not in email["text"]
    assert "TEEI Mentorship: hidden" in email["text"] and "1.50" not in email["text"]
    assert "Verified hours:    hidden" in email["text"] and "4.50" not in email["html"]
    pdf = PdfReader(io.BytesIO(base64.b64decode(email["attachments"][0]["content"])))
    attached = " ".join(" ".join(p.extract_text() for p in pdf.pages).split())
    assert "hidden Verified hours" in attached and "4.50" not in attached
