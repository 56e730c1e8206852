"""One filing, one report ID (issue 47, item 2): every PDF download, every report email and its
attachment, the report page and the year's closure state the same ID; /verify/<ID> confirms the
filing to anyone, with its totals as filed and hidden exactly as the filing hides them."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

from pypdf import PdfReader

from portal.report_emails.operations import run_due
from tests.pages import csrf_from
from tests.reports.conftest import shown_hours

from .test_schedule_runs import Row, oslo, utc

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "report-ids"
MARCH = "from=2026-03-01&to=2026-03-31&programme=all"
MARCH_ID = re.compile(r"TEEI-\d+-20260301-20260331-[0-9A-F]{8}")


def pdf_text(body: bytes) -> str:
    return " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(body)).pages).split())


def march_sessions(company_id, people, mentors=5):
    """Six colleagues in Language (50 min each) and `mentors` others in Mentorship (45 min each)."""
    return [Row("language", uid, company_id, oslo("2026-03-03T18:00:00"), 50) for uid in people[:6]] + [
        Row("mentorship", uid, company_id, oslo("2026-03-10T18:00:00"), 45) for uid in people[6 : 6 + mentors]
    ]


def test_two_downloads_the_page_and_a_report_email_state_one_report_id(
    ctx, company, insert_sessions, subscribe, report_rows, deliver, provider_model, manager_client, settings
):
    company_id, manager, people = company("Acme Ltd", employees=12)
    insert_sessions(march_sessions(company_id, people))
    subscribe(manager, "monthly", since="2026-03-15T00:00:00.000000Z")
    client = manager_client(manager)

    first = client.get(f"/reports/export.pdf?{MARCH}")
    # A late session for March arrives between the two downloads: the filing does not change.
    insert_sessions(
        [Row("language", people[11], company_id, oslo("2026-03-20T18:00:00"), 60)],
        received_at="2099-01-01T00:00:00.000000Z",
    )
    second = client.get(f"/reports/export.pdf?{MARCH}")
    first_text, second_text = pdf_text(first.get_data()), pdf_text(second.get_data())
    ids = set(MARCH_ID.findall(first_text))
    assert len(ids) == 1, f"one ID on every page of the PDF: {ids}"
    (report_id,) = ids
    assert set(MARCH_ID.findall(second_text)) == {report_id}, "the second download states the same ID"
    assert first_text == second_text, "a filed report is the same every time, its 'as of' too"
    assert f"{settings.public_base_url}/verify/{report_id}" in first_text, "the PDF carries the verify link"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "filed-march.pdf").write_bytes(first.get_data())  # for a person to look at

    page = client.get(f"/reports?{MARCH}").get_data(as_text=True)
    assert re.search(rf'id="filed-id">Filed as report <code>{report_id}</code>', page)
    assert f'href="/verify/{report_id}"' in page

    run_due(ctx, now=utc("2026-04-01T06:00:00"))
    (row,) = report_rows()
    assert deliver(row["id"]) == "ack:sent"
    (email,) = provider_model.sent()
    assert set(MARCH_ID.findall(email["text"])) == {report_id}
    assert set(MARCH_ID.findall(email["html"])) == {report_id}
    assert f"{settings.public_base_url}/verify/{report_id}" in email["text"]
    attached = pdf_text(base64.b64decode(email["attachments"][0]["content"]))
    assert set(MARCH_ID.findall(attached)) == {report_id}, "the attachment states the filing's ID"


def test_the_verify_page_states_the_filed_totals_to_anyone(client, company, insert_sessions, manager_client, auth):
    company_id, manager, people = company("Acme Ltd", employees=12)
    insert_sessions(march_sessions(company_id, people))
    signed_in = manager_client(manager)
    (report_id,) = set(MARCH_ID.findall(pdf_text(signed_in.get(f"/reports/export.pdf?{MARCH}").get_data())))
    # Recorded after the filing: the verify page still states the figures as filed.
    insert_sessions(
        [Row("language", people[11], company_id, oslo("2026-03-20T18:00:00"), 60)],
        received_at="2099-01-01T00:00:00.000000Z",
    )
    auth.logout()

    answer = client.get(f"/verify/{report_id}")
    page = answer.get_data(as_text=True)
    assert answer.status_code == 200, "no sign-in needed"
    assert f"Report {report_id} was filed" in page
    assert re.search(r'id="verify-company">Acme Ltd<', page)
    assert re.search(r'id="verify-period">March 2026 \(1 Mar 2026 – 31 Mar 2026', page)
    # The filed figures, computed here from the sessions as filed: 6 × 50 min and 5 × 45 min.
    assert re.search(rf'id="verify-hours">{re.escape(shown_hours(6 * 50 + 5 * 45))}<', page)
    assert re.search(r'id="verify-sessions">11<', page) and re.search(r'id="verify-volunteers">11<', page)
    programmes = page[page.index('id="verify-programmes"') :]
    assert f">{shown_hours(6 * 50)}<" in programmes and f">{shown_hours(5 * 45)}<" in programmes
    assert shown_hours(6 * 50 + 5 * 45 + 60) not in page, "the late session is not in the filing"
    assert client.get(f"/verify/{report_id.lower()}").status_code == 200, "typed in lower case, the same ID"


def test_the_verify_page_hides_what_the_filing_hides(client, company, insert_sessions, manager_client, auth):
    company_id, manager, people = company("Acme Ltd", employees=12)
    insert_sessions(march_sessions(company_id, people, mentors=2))  # two mentors: a group under 5
    signed_in = manager_client(manager)
    filed = pdf_text(signed_in.get(f"/reports/export.pdf?{MARCH}").get_data())
    (report_id,) = set(MARCH_ID.findall(filed))
    auth.logout()
    page = client.get(f"/verify/{report_id}").get_data(as_text=True)
    assert "TEEI Mentorship hidden hidden hidden" in filed, "the PDF hides the two mentors' figures"
    programmes = page[page.index('id="verify-programmes"') :]
    mentorship = programmes[
        programmes.index("TEEI Mentorship") : programmes.index("</tr>", programmes.index("TEEI Mentorship"))
    ]
    assert mentorship.count(">hidden<") == 3 and shown_hours(2 * 45) not in page
    total_hidden = "hidden Verified hours" in filed
    assert ('id="verify-hours"><span class="hidden-figure">hidden<' in page) == total_hidden
    if total_hidden:
        assert shown_hours(6 * 50 + 2 * 45) not in page


def test_an_unknown_report_id_is_a_plain_404(client, company, insert_sessions, manager_client, auth):
    for wrong in ("TEEI-1-20260301-20260331-00000000", "not-a-report", "TEEI-1-2026"):
        answer = client.get(f"/verify/{wrong}")
        assert answer.status_code == 404, wrong
        assert "No filed report has this ID" in answer.get_data(as_text=True)


def test_closing_a_year_keeps_the_id_its_pdf_already_stated(company, insert_sessions, manager_client, db):
    import sqlalchemy as sa

    company_id, manager, people = company("Acme Ltd", employees=12)
    insert_sessions(march_sessions(company_id, people))
    client = manager_client(manager)
    year = "from=2025-01-01&to=2025-12-31&programme=all"
    insert_sessions([Row("language", uid, company_id, oslo("2025-05-05T18:00:00"), 60) for uid in people[:6]])
    (report_id,) = set(
        re.findall(
            r"TEEI-\d+-20250101-20251231-[0-9A-F]{8}", pdf_text(client.get(f"/reports/export.pdf?{year}").get_data())
        )
    )
    asked = client.get("/reports/close?period_start=2025-01-01").get_data(as_text=True)
    done = client.post(
        "/reports/close",
        data={"period_start": "2025-01-01", "confirmed": "yes", "csrf_token": csrf_from(asked)},
        follow_redirects=True,
    ).get_data(as_text=True)
    assert f"Its filed report is {report_id}" in done
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT report_id FROM report_closures")).scalar_one() == report_id
    again = pdf_text(client.get(f"/reports/export.pdf?{year}").get_data())
    assert set(re.findall(r"TEEI-\d+-20250101-20251231-[0-9A-F]{8}", again)) == {report_id}
