"""The report email's body hides what its attached filing PDF hides."""

from __future__ import annotations

import base64
import io
import json

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
    assert "and any hours one volunteer gave 80% or more of, and so does this email" in email["text"]
    assert "and any hours one volunteer gave 80% or more of, and so does this email" in email["html"]
    pdf = PdfReader(io.BytesIO(base64.b64decode(email["attachments"][0]["content"])))
    attached = " ".join(" ".join(p.extract_text() for p in pdf.pages).split())
    assert "hidden Verified hours" in attached and "4.50" not in attached


def test_a_colleague_alone_in_two_groups_learns_nothing_from_the_emails_alone(
    ctx, company, insert_sessions, subscribe, report_rows, make_user
):
    """Issue 46.6 through the report emails only: the monthly emails of Q1 and the quarterly one. X is
    alone in January's Mentorship and March's Language, Y in February's Mentorship; with X's own two
    figures, nothing the attachments print gives Y's February (nor Y's figure X's)."""
    from portal.report_emails.content import report_from_input
    from portal.reports import filing_pdf
    from tests.reports.test_filing_disclosure import determined, printed_hours, staff_rows

    company_id, manager, staff = company("Acme Ltd", employees=14)
    x, y = staff[12], staff[13]
    insert_sessions(
        staff_rows(staff, company_id, "language", "2025-01-14", staff[:6])
        + staff_rows(staff, company_id, "mentorship", "2025-01-21", [x], 50)
        + staff_rows(staff, company_id, "language", "2025-02-11", staff[:6])
        + staff_rows(staff, company_id, "mentorship", "2025-02-18", [y], 70)
        + staff_rows(staff, company_id, "language", "2025-03-11", [x], 40)
        + staff_rows(staff, company_id, "mentorship", "2025-03-18", staff[6:12], 45)
    )
    subscribe(manager, "monthly", since="2025-01-01T00:00:00.000000Z")
    subscribe(make_user("manager", company="Acme Ltd"), "quarterly", since="2025-01-01T00:00:00.000000Z")
    run_due(ctx, now=utc("2025-04-02T06:00:00"))
    rows = report_rows()
    assert len(rows) == 4  # January, February, March, and the quarter
    known = {}
    for row in rows:
        data = json.loads(row["template_input"])
        assert data["figures"]["alone"] == {}  # the colleagues' keys stay in the filing record
        pdf = PdfReader(io.BytesIO(filing_pdf(report_from_input(data))))
        known.update(printed_hours(" ".join(" ".join(p.extract_text() for p in pdf.pages).split())))
    months = ["2025-01", "2025-02", "2025-03"]
    alone = {"x": [("2025-01", "2025-01", "mentorship"), ("2025-03", "2025-03", "language")]}
    alone["y"] = [("2025-02", "2025-02", "mentorship")]
    for person, own in alone.items():
        for other, theirs in alone.items():
            for target in theirs if other != person else []:
                assert target not in known
                assert not determined(target, list(known) + own, months), f"{target} follows for {person}"
