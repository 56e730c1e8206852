"""An employee's certificate of their volunteering hours (fpdf2), in the language of the employee
who downloads it."""

from __future__ import annotations

from portal.core.i18n import ENGLISH, translate, translate_plural
from portal.core.programmes import PROGRAMMES
from portal.reports.crosswalk import sdgs
from portal.reports.hours import hours_text
from portal.reports.pdf_page import BRAND, MUTED, NEXT, ReportPDF


def certificate_pdf(
    *,
    name: str,
    company: str,
    minutes_by_programme: dict[str, int],
    sessions: int,
    first: str | None,
    last: str | None,
    issued: str,
    certificate_id: str,
    language: str = ENGLISH,
) -> bytes:
    pdf = ReportPDF(
        translate(
            language, "Certificate %(certificate_id)s · issued %(issued)s", certificate_id=certificate_id, issued=issued
        ),
        language,
    )
    pdf.alias_nb_pages()
    pdf.add_page()
    pdf.ln(20)
    pdf.font(10, bold=True, colour=BRAND)
    pdf.cell(0, 6, pdf.t("THE EDUCATIONAL EQUALITY INSTITUTE"), align="C", **NEXT)  # a name: as it is
    pdf.ln(6)
    pdf.font(26, bold=True)
    pdf.cell(0, 14, pdf.t(translate(language, "Certificate of volunteering")), align="C", **NEXT)
    pdf.ln(8)
    pdf.font(12, colour=MUTED)
    pdf.cell(0, 7, pdf.t(translate(language, "This certifies that")), align="C", **NEXT)
    pdf.font(20, bold=True)
    pdf.multi_cell(0, 11, pdf.t(name), align="C", **NEXT)
    pdf.font(12, colour=MUTED)
    pdf.multi_cell(0, 7, pdf.t(translate(language, "of %(company)s", company=company)), align="C", **NEXT)
    pdf.ln(6)
    total = sum(minutes_by_programme.values())
    pdf.font(14)
    hours = hours_text(total, language)
    if first and last:
        volunteered = translate_plural(
            language,
            "volunteered %(hours)s hours in %(num)d attended session between %(first)s and %(last)s.",
            "volunteered %(hours)s hours in %(num)d attended sessions between %(first)s and %(last)s.",
            sessions,
            hours=hours,
            first=first,
            last=last,
        )
    else:
        volunteered = translate_plural(
            language,
            "volunteered %(hours)s hours in %(num)d attended session.",
            "volunteered %(hours)s hours in %(num)d attended sessions.",
            sessions,
            hours=hours,
        )
    pdf.multi_cell(0, 8, pdf.t(volunteered), align="C", **NEXT)
    pdf.ln(4)
    for programme, minutes in minutes_by_programme.items():
        pdf.font(11)
        pdf.multi_cell(
            0,
            6.5,
            pdf.t(
                translate(
                    language,
                    "%(programme)s: %(hours)s hours · %(goals)s",
                    programme=PROGRAMMES[programme],
                    hours=hours_text(minutes, language),
                    goals=sdgs(programme, language),
                )
            ),
            align="C",
            **NEXT,
        )
    pdf.ln(10)
    pdf.para(
        translate(
            language,
            "Hours are measured from session attendance recorded by the programme platforms, not entered by hand.",
        ),
        size=9,
        colour=MUTED,
    )
    return bytes(pdf.output())
