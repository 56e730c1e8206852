"""Dates as the reader writes them (issue 47, item 8): "6. okt. 2026" in Norwegian, "6 Oct 2026" in
English, on the settings page and in the filing PDF's header, through the portal's one date format
(portal/core/i18n.py `day`)."""

from __future__ import annotations

import io
from datetime import datetime

from pypdf import PdfReader

from tests.pages import csrf_from

from .conftest import OSLO, Row, oslo

NORWEGIAN = {"Accept-Language": "nb-NO,nb;q=0.9"}
# Written out here, apart from the portal's code: how Norwegian abbreviates the months.
NB_MONTHS = ["jan.", "feb.", "mar.", "apr.", "mai", "jun.", "jul.", "aug.", "sep.", "okt.", "nov.", "des."]
EN_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def closed_2025(company, insert_sessions, manager_client):
    acme, manager, staff = company("Acme Ltd", employees=5)
    insert_sessions([Row("language", person, acme, oslo("2025-03-04T18:00"), 60) for person in staff])
    client = manager_client(manager)
    token = csrf_from(client.get("/reports/settings").get_data(as_text=True))
    answer = client.post("/reports/close", data={"period_start": "2025-01-01", "confirmed": "yes", "csrf_token": token})
    assert answer.status_code == 302
    return client


def test_the_settings_page_says_when_a_year_was_closed_in_the_readers_language(
    company, insert_sessions, manager_client
):
    client = closed_2025(company, insert_sessions, manager_client)
    today = datetime.now(OSLO).date()  # the close happened just now, a local day in the portal's zone
    norwegian = client.get("/reports/settings", headers=NORWEGIAN).get_data(as_text=True)
    english = client.get("/reports/settings", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert f"{today.day}. {NB_MONTHS[today.month - 1]} {today.year}" in norwegian
    assert f"Closed {today.day} {EN_MONTHS[today.month - 1]} {today.year} · filed" in english
    assert today.isoformat() not in norwegian + english


def test_the_filing_pdf_header_writes_the_period_in_the_readers_language(company, insert_sessions, manager_client):
    client = closed_2025(company, insert_sessions, manager_client)
    for headers, start, end in (
        (NORWEGIAN, "1. jan. 2025", "31. des. 2025"),
        ({"Accept-Language": "en"}, "1 Jan 2025", "31 Dec 2025"),
    ):
        response = client.get("/reports/export.pdf?from=2025-01-01&to=2025-12-31&programme=all", headers=headers)
        assert response.status_code == 200
        first_page = PdfReader(io.BytesIO(response.get_data())).pages[0].extract_text()
        header = " ".join(first_page.split())
        assert start in header and end in header, header[:400]
        assert "2025-01-01" not in header and "2025-12-31" not in header
