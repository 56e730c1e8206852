"""A volunteer's certificate (issue 47, item 9): the period they choose, its hours and sessions as
an independent count gives them, dates in their language, one page, and an ID that /verify confirms."""

from __future__ import annotations

import io
import re

import pytest
import sqlalchemy as sa
from pypdf import PdfReader

from .conftest import Row, oslo, shown_hours, utc

YEAR_2025 = "/me/hours/certificate.pdf?from=01.01.2025&to=31.12.2025"
NORWEGIAN = {"Accept-Language": "nb-NO,nb;q=0.9"}


def pdf_text(response) -> tuple[int, str]:
    """The PDF's page count, and its text on one line."""
    assert response.status_code == 200 and response.mimetype == "application/pdf", response.get_data(as_text=True)
    pages = PdfReader(io.BytesIO(response.get_data())).pages
    return len(pages), " ".join(" ".join(page.extract_text() for page in pages).split())


def certificate_id(text: str) -> str:
    return re.search(r"TEEI-C-\d{8}-\d{8}-[0-9A-F]{10}", text).group(0)


@pytest.fixture
def volunteer(company, insert_sessions, client, auth):
    """Acme Volunteer 00, signed in, with 2025's sessions (odd minutes, so rounding shows) and some
    that must not count: before the year by local time, not attended, or a colleague's."""
    acme, _, staff = company("Acme Ltd", employees=2)
    counted = [
        Row("language", staff[0], acme, oslo("2025-01-01T00:30"), 47),  # 2024-12-31 23:30 UTC: 2025 in Oslo
        Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 53),
        Row("language", staff[0], acme, oslo("2025-06-10T18:00"), 61),
        Row("mentorship", staff[0], acme, oslo("2025-12-31T23:30"), 89),  # 2025-12-31 22:30 UTC
    ]
    others = [
        Row("language", staff[0], acme, oslo("2024-12-31T23:30"), 500),  # 2024 in Oslo
        Row("language", staff[0], acme, utc("2025-12-31T23:30"), 510),  # 2026-01-01 in Oslo
        Row("mentorship", staff[0], acme, oslo("2025-05-05T18:00"), 520, status="no_show"),
        Row("language", staff[1], acme, oslo("2025-05-05T18:00"), 530),
    ]
    insert_sessions(counted + others)
    auth.login("vol0@acme.example")
    return counted


def test_the_certificate_states_the_hours_and_sessions_of_the_chosen_period_on_one_page(volunteer, client):
    pages, text = pdf_text(client.get(YEAR_2025))

    minutes = sum(r.minutes for r in volunteer)  # 250 minutes: 4.1666… h, shown 4.17
    language = sum(r.minutes for r in volunteer if r.platform == "language")
    assert pages == 1
    assert "Certificate of volunteering" in text and "Acme Volunteer 00" in text and "of Acme Ltd" in text
    assert (
        f"volunteered {shown_hours(minutes)} hours in {len(volunteer)} attended sessions "
        "between 1 Jan 2025 and 31 Dec 2025." in text
    )
    assert f"TEEI Language {shown_hours(language)} h · 3 sessions" in text
    assert f"TEEI Mentorship {shown_hours(89)} h · 1 session" in text
    assert "TEEI Language · TEEI Mentorship" in text, "the programmes' names head the page"
    assert "Signature, for The Educational Equality Institute" in text and "Date of issue" in text


def test_a_shorter_period_counts_only_its_own_days(volunteer, client):
    _, text = pdf_text(client.get("/me/hours/certificate.pdf?from=2025-03-01&to=2025-06-10"))
    assert f"volunteered {shown_hours(53 + 61)} hours in 2 attended sessions between 1 Mar 2025 and 10 Jun 2025" in text


def test_in_norwegian_the_dates_and_hours_are_written_as_norwegians_write_them(volunteer, client):
    _, text = pdf_text(client.get(YEAR_2025, headers=NORWEGIAN))
    hours = shown_hours(sum(r.minutes for r in volunteer)).replace(".", ",")
    assert "1. jan. 2025" in text and "31. des. 2025" in text
    assert hours in text and shown_hours(89).replace(".", ",") in text


def test_the_same_certificate_keeps_its_id_and_the_public_page_confirms_what_it_states(
    volunteer, client, app, insert_sessions, db
):
    _, first = pdf_text(client.get(YEAR_2025))
    _, again = pdf_text(client.get("/me/hours/certificate.pdf?from=2025-01-01&to=2025-12-31"))
    issued = certificate_id(first)
    assert certificate_id(again) == issued, "one statement, one ID, on every copy"
    assert f"/verify/{issued}" in first

    stranger = app.test_client()  # nobody signed in
    page = stranger.get(f"/verify/{issued}").get_data(as_text=True)
    assert stranger.get(f"/verify/{issued}").status_code == 200
    assert "Acme Volunteer 00" in page and "Acme Ltd" in page
    assert f'id="verify-hours">{shown_hours(sum(r.minutes for r in volunteer))}<' in page
    assert 'id="verify-sessions">4<' in page and "1 Jan 2025 – 31 Dec 2025" in page

    # A session recorded late for 2025: the next certificate states it, under a new ID; the first
    # still verifies as what it said.
    with db.read() as conn:
        user = conn.execute(sa.text("SELECT id, company_id FROM users WHERE email = 'vol0@acme.example'")).one()
    insert_sessions([Row("language", user.id, user.company_id, oslo("2025-09-09T18:00"), 60)])
    _, later = pdf_text(client.get(YEAR_2025))
    assert certificate_id(later) != issued and "5 attended sessions" in later
    assert 'id="verify-sessions">4<' in stranger.get(f"/verify/{issued}").get_data(as_text=True)

    unknown = issued[:-4] + ("0000" if not issued.endswith("0000") else "1111")
    answer = stranger.get(f"/verify/{unknown}")
    assert answer.status_code == 404 and "No certificate has this ID" in answer.get_data(as_text=True)
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM volunteer_certificates")).scalar() == 2


def test_the_form_offers_this_year_so_far(volunteer, client):
    page = client.get("/me/hours/certificate").get_data(as_text=True)
    today = re.search(r'name="to" type="text" value="(\d\d\.\d\d\.(\d{4}))"', page)
    assert today, page
    assert f'name="from" type="text" value="01.01.{today.group(2)}"' in page
    assert 'action="/me/hours/certificate.pdf"' in page
    assert "/me/hours/certificate" in client.get("/me/hours").get_data(as_text=True)


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("from=31.12.2025&to=01.01.2025", "to", "The end of the period must be on or after its start."),
        ("from=31.02.2025&to=31.12.2025", "from", "does not exist in the calendar"),
        ("from=yesterday&to=31.12.2025", "from", "must be a date, day first or year first"),
        ("from=&to=31.12.2025", "from", "Enter the first day of the period"),
        ("from=01.01.2025&to=31.12.2099", "to", "The period cannot end after today"),
    ],
)
def test_bad_dates_are_answered_on_their_field_and_nothing_is_issued(volunteer, client, db, query, field, message):
    response = client.get(f"/me/hours/certificate.pdf?{query}")
    page = response.get_data(as_text=True)
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert message in page
    assert f'<a href="#{field}">' in page, "the summary links to the field"
    assert re.search(rf'<input[^>]*aria-invalid="true"[^>]*id="{field}"|<input[^>]*id="{field}"[^>]*aria-invalid', page)
    assert "<title>Error:" in page
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM volunteer_certificates")).scalar() == 0


def test_a_period_without_sessions_says_so_instead_of_certifying_zero_hours(volunteer, client):
    response = client.get("/me/hours/certificate.pdf?from=01.01.2023&to=31.12.2023")
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "You attended no sessions between 1 Jan 2023 and 31 Dec 2023" in page
    assert 'value="01.01.2023"' in page, "what was typed is kept"


def test_only_volunteers_get_certificates(company, manager_client):
    _, manager, _ = company("Acme Ltd", employees=1)
    client = manager_client(manager)
    assert client.get("/me/hours/certificate").status_code == 403
    assert client.get(YEAR_2025).status_code == 403


@pytest.mark.parametrize("language", ["en", "nb"])
def test_a_long_name_and_company_still_fit_one_page_above_the_signature(language):
    from datetime import date

    from portal.reports import certificate as certificates

    issued = certificates.Certificate(
        "TEEI-C-20260101-20261006-3F7A09C2D1",
        "Maria-Alexandra Christensen-Vasquez de la Fuente Øvergaard-Lindqvist Hansen",
        "Fjordkraft Nordic Volunteering and Community Engagement Holding AS (Trondheim og omegn)",
        date(2026, 1, 1),
        date(2026, 10, 6),
        {"language": (1247, 23), "mentorship": (1, 1)},
        date(2026, 10, 6),
    )
    body = certificates.certificate_pdf(issued, language, "http://127.0.0.1:5000/verify/" + issued.certificate_id)
    pages = PdfReader(io.BytesIO(body)).pages
    text = " ".join(pages[0].extract_text().split())
    assert len(pages) == 1 and "Øvergaard-Lindqvist Hansen" in text and issued.certificate_id in text
    # Drawn compactly (the programmes' goals give way), the body ends above the signature line's date.
    assert certificates._drawn(issued, language, "", 0, compact=True).get_y() <= certificates.SIGNATURE_LINE - 16
