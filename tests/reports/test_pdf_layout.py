"""The filing PDF's paragraphs are broken once per process (pdf_page.wrapped) and say, line for line,
what fpdf's own multi_cell said when it broke every paragraph of every PDF again."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import date, timedelta

import pytest
from pypdf import PdfReader

from portal.core.clock import now_iso
from portal.core.periods import Period, month_period
from portal.reports import pdf_page
from portal.reports.operations import file_download
from portal.reports.pdf import filing_pdf
from portal.reports.report import build_report
from portal.reports.selection import ReportQuery

from .conftest import OSLO, Row, oslo


def multi_cell_para(self, text, size=9.5, colour=pdf_page.INK):
    """The paragraph as the page drew it before the cache: one multi_cell, broken on the spot."""
    self.font(size, colour=colour)
    self.multi_cell(0, 4.8, self.t(text), align="L", **pdf_page.NEXT)
    self.ln(1.2)


def lines(pdf: bytes) -> list[list[str]]:
    """Each page's text lines as pypdf reads them: a line broken elsewhere changes the list."""
    return [page.extract_text().splitlines() for page in PdfReader(io.BytesIO(pdf)).pages]


@pytest.fixture(params=["month", "year"])
def filed(request, db, company, insert_sessions):
    """October 2025 (a report email's month) or the year 2025, filed as a download files it (one
    report ID, one as-of): 7 colleagues in Language every month, 2 in Mentorship in May (hidden).
    Both run over a page; the month's page turns inside a methodology paragraph."""
    company_id, _, staff = company("Fjordkraft Nordic Volunteering AS", employees=10)
    rows = [
        Row("language", person, company_id, oslo(f"2025-{month:02d}-03T18:00") + timedelta(days=n), 45 + 15 * n)
        for month in range(1, 13)
        for n, person in enumerate(staff[:7])
    ]
    rows += [Row("mentorship", person, company_id, oslo("2025-05-12T12:00"), 90) for person in staff[7:9]]
    insert_sessions(rows)
    if request.param == "month":
        period = month_period(date(2025, 10, 1))
    else:
        period = Period(date(2025, 1, 1), date(2025, 12, 31), "2025", "year")
    report = build_report(
        db,
        company_id=company_id,
        company_name="Fjordkraft Nordic Volunteering AS",
        query=ReportQuery(period, "all"),
        tz=OSLO,
        facts=True,
    )
    filed = file_download(db, company_id=company_id, period=period, figures=report.figures, tz=OSLO, now=now_iso())
    return replace(report, figures=filed.figures, mask=filed.mask, corrections=filed.corrections)


@pytest.mark.parametrize("language", ["en", "nb"])
def test_a_filing_pdf_from_cached_lines_says_what_multi_cell_said(language, filed, monkeypatch):
    pdf_page.wrapped.cache_clear()
    first = lines(filing_pdf(filed, language))
    after_first = pdf_page.wrapped.cache_info()
    again = lines(filing_pdf(filed, language))
    after_again = pdf_page.wrapped.cache_info()
    with monkeypatch.context() as patch:
        patch.setattr(pdf_page.ReportPDF, "para", multi_cell_para)
        reference = lines(filing_pdf(filed, language))

    assert len(reference) >= 2, "the report is meant to run over a page"
    assert first == reference
    assert again == reference
    # The first PDF broke its paragraphs (the methodology's among them); the same report again broke
    # none: every line came from the cache, and it is still multi_cell's line.
    assert after_first.misses >= 10
    assert after_again.misses == after_first.misses and after_again.hits >= after_first.misses


def test_languages_in_turn_each_get_their_own_lines(filed, monkeypatch):
    """English, Norwegian, English again in one process, the cache warm with the other language's
    lines each time: each PDF says what multi_cell says in its own language."""
    with monkeypatch.context() as patch:
        patch.setattr(pdf_page.ReportPDF, "para", multi_cell_para)
        reference = {language: lines(filing_pdf(filed, language)) for language in ("en", "nb")}
    assert reference["en"] != reference["nb"]
    for language in ("en", "nb", "en", "nb"):
        assert lines(filing_pdf(filed, language)) == reference[language], language


def drawn_pages(texts: list[str]) -> list[bytes]:
    """The page content streams of a PDF of `texts` as paragraphs: every mark and where it is."""
    pdf = pdf_page.ReportPDF("Footer", "en")
    pdf.add_page()
    for text in texts:
        pdf.para(text)
        pdf.para(text, size=8, colour=pdf_page.MUTED)
    pdf.set_x(60)
    pdf.para("A paragraph that starts part of the way across the page, " * 6)
    return [page.get_contents().get_data() for page in PdfReader(io.BytesIO(bytes(pdf.output()))).pages]


def test_each_paragraph_is_drawn_where_multi_cell_drew_it(monkeypatch):
    """Not only the same words: the same marks at the same places, over page turns, for texts with
    line breaks of their own (one at the end adds a line), none, or a word longer than the line."""
    texts = ["Two\nlines", "Ends with a break\n", "", "Gap\n\nbetween", "  spaced  ", "x" * 300]
    texts += ["Tekst – «sitat» · 80 % " * 30] * 4
    pdf_page.wrapped.cache_clear()
    first, cached = drawn_pages(texts), drawn_pages(texts)
    with monkeypatch.context() as patch:
        patch.setattr(pdf_page.ReportPDF, "para", multi_cell_para)
        reference = drawn_pages(texts)
    assert len(reference) >= 2
    assert first == reference
    assert cached == reference
