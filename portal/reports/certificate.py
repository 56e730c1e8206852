"""A volunteer's certificate of their hours: what it states, under its own ID, and its one-page PDF
(fpdf2), in the language of the volunteer who downloads it.

One statement, one ID (issue 47, item 9). A certificate covers a period the volunteer chooses and
states their name and company, the period, their attended hours and sessions by programme, and the
day it was first issued. Each distinct statement is stored once in `volunteer_certificates` under a
random ID; downloading the same statement again gives the same ID and issue day, so every copy a
volunteer hands out can be quoted and checked at /verify/<certificate ID>, the public page that
confirms filed reports (item 2).

Why its own ID, and not the company's filing ID: a filing is the company's, for whole periods, and
names nobody, so it cannot vouch for one person's hours in a period they chose. Why stored, and
not a signed token: the ID stays short enough to type from paper, and the page can say what this
certificate stated even after late sessions change the live figures (those make a new certificate
with a new ID; the old one still verifies as what it said). The random part (40 bits) keeps the
public page from being walked for people's names. The row names a person, so erasing them deletes
it (portal/privacy/operations.py) and the page then knows no such certificate.

All SQL of `volunteer_certificates` is here.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import date
from math import ceil
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core.i18n import ENGLISH, day, number, translate, translate_plural
from portal.core.periods import Period
from portal.core.programmes import PROGRAMMES
from portal.reports.crosswalk import sdgs
from portal.reports.hours import hours_text
from portal.reports.pdf_page import BRAND, INK, LINE, MUTED, NEXT, ReportPDF, qr_png

CERTIFICATE_ID_FORM = re.compile(r"^TEEI-C-[0-9]{8}-[0-9]{8}-[0-9A-F]{10}$")

# A volunteer's attended minutes and sessions in [start, end) (UTC text), by programme.
_ATTENDED = sa.text("""
    SELECT platform, SUM(minutes) AS minutes, COUNT(*) AS sessions FROM attendance_sessions
    WHERE user_id = :user_id AND status = 'attended' AND held_at >= :start AND held_at < :end
    GROUP BY platform
""")
# The certificate that already states exactly this, if one was issued.
_SAME = sa.text("""
    SELECT * FROM volunteer_certificates
    WHERE user_id = :user_id AND period_start = :period_start AND period_end = :period_end AND name = :name
      AND company_name = :company_name AND minutes = :minutes AND sessions = :sessions AND programmes = :programmes
    ORDER BY id LIMIT 1
""")
_INSERT = sa.text("""
    INSERT INTO volunteer_certificates (certificate_id, user_id, name, company_name, period_start, period_end,
                                        minutes, sessions, programmes, issued_on, created_at)
    VALUES (:certificate_id, :user_id, :name, :company_name, :period_start, :period_end,
            :minutes, :sessions, :programmes, :issued_on, :now)
    RETURNING *
""")
_BY_ID = sa.text("SELECT * FROM volunteer_certificates WHERE certificate_id = :certificate_id")


@dataclass(frozen=True)
class Certificate:
    certificate_id: str
    name: str
    company_name: str
    period_start: date
    period_end: date
    programmes: dict[str, tuple[int, int]]  # programme -> (minutes, sessions), in PROGRAMMES' order
    issued_on: date

    @property
    def minutes(self) -> int:
        return sum(minutes for minutes, _ in self.programmes.values())

    @property
    def sessions(self) -> int:
        return sum(sessions for _, sessions in self.programmes.values())

    @classmethod
    def from_row(cls, row) -> Certificate:
        return cls(
            row.certificate_id,
            row.name,
            row.company_name,
            date.fromisoformat(row.period_start),
            date.fromisoformat(row.period_end),
            {p: (found[0], found[1]) for p, found in json.loads(row.programmes).items()},
            date.fromisoformat(row.issued_on),
        )


def new_certificate_id(period: Period) -> str:
    """The period to read, and a random part so that no one can guess another's certificate."""
    return f"TEEI-C-{period.start:%Y%m%d}-{period.end:%Y%m%d}-{secrets.token_hex(5).upper()}"


def issue_on(
    conn: sa.Connection,
    *,
    user_id: int,
    name: str,
    company_name: str,
    period: Period,
    tz: ZoneInfo,
    today: date,
    now: str,
) -> Certificate | None:
    """The certificate of the volunteer's attended sessions in `period` (local days in `tz`), inside
    the caller's write: the one already issued if it states the same, else a new one issued `today`.
    None when no session was attended in the period (there is nothing to certify)."""
    start, end = period.utc_bounds(tz)
    found = {
        row.platform: (row.minutes, row.sessions)
        for row in conn.execute(_ATTENDED, {"user_id": user_id, "start": start, "end": end})
    }
    programmes = {p: found[p] for p in PROGRAMMES if p in found}
    if not programmes:
        return None
    statement = {
        "user_id": user_id,
        "name": name,
        "company_name": company_name,
        "period_start": period.start.isoformat(),
        "period_end": period.end.isoformat(),
        "minutes": sum(m for m, _ in programmes.values()),
        "sessions": sum(s for _, s in programmes.values()),
        "programmes": json.dumps({p: list(v) for p, v in programmes.items()}),
    }
    row = conn.execute(_SAME, statement).first()
    if row is None:
        row = conn.execute(
            _INSERT,
            {**statement, "certificate_id": new_certificate_id(period), "issued_on": today.isoformat(), "now": now},
        ).one()
    return Certificate.from_row(row)


def find_certificate(conn: sa.Connection, certificate_id: str) -> Certificate | None:
    row = conn.execute(_BY_ID, {"certificate_id": certificate_id}).first()
    return None if row is None else Certificate.from_row(row)


# --- the PDF: one A4 page -----------------------------------------------------------------------------

ORGANISATION = "THE EDUCATIONAL EQUALITY INSTITUTE"  # a name: as it is, in every language
LOGO_AREA = (93.0, 20.0, 24.0)  # x, y, size (mm): where the programme's logo goes; a drawn mark until then
QR_SIZE = 26  # mm


class CertificatePDF(ReportPDF):
    """The report page, framed, with no running footer: a certificate is one page, its ID in its body."""

    def footer(self):
        pass


def certificate_pdf(certificate: Certificate, language: str = ENGLISH, verify_url: str = "") -> bytes:
    """One A4 page. The body (from the name to the programmes) is drawn once to measure it, then
    again with the room left above the signature shared out between its blocks, so a certificate
    of one programme is as full as one of two, and a long name still leaves the foot clear."""
    room = SIGNATURE_LINE - 16 - _drawn(certificate, language, verify_url, 0).get_y()
    if room < 0:  # a very long name or company: the programmes' goals give way, the foot stays clear
        return bytes(_drawn(certificate, language, verify_url, 0, compact=True).output())
    return bytes(_drawn(certificate, language, verify_url, min(room, 36)).output())


def _drawn(
    certificate: Certificate, language: str, verify_url: str, spread: float, compact: bool = False
) -> CertificatePDF:
    pdf = CertificatePDF("", language)
    pdf.set_auto_page_break(False)
    pdf.set_title(translate(language, "Certificate of volunteering"))
    pdf.add_page()
    _frame(pdf)
    _logo(pdf)
    _heading(pdf, certificate, language)
    pdf.ln(spread * 0.3)
    _statement(pdf, certificate, language)
    pdf.ln(spread * 0.3)
    _figures(pdf, certificate, language, goals=not compact)
    end = pdf.get_y()
    _signature(pdf, certificate, language)
    _verification(pdf, certificate, language, verify_url)
    pdf.set_y(end)  # where the body ends: what the measuring pass reads
    return pdf


def _frame(pdf: ReportPDF) -> None:
    pdf.set_draw_color(*BRAND)
    pdf.set_line_width(0.8)
    pdf.rect(9, 9, pdf.w - 18, pdf.h - 18)
    pdf.set_draw_color(*LINE)
    pdf.set_line_width(0.3)
    pdf.rect(12, 12, pdf.w - 24, pdf.h - 24)
    pdf.set_line_width(0.2)


def _logo(pdf: ReportPDF) -> None:
    """The logo area: a round mark in the brand colour with the initials, until a logo file is given."""
    x, y, size = LOGO_AREA
    pdf.set_fill_color(*BRAND)
    pdf.ellipse(x, y, size, size, style="F")
    pdf.set_xy(x, y + size / 2 - 4)
    pdf.font(13, bold=True, colour=(255, 255, 255))
    pdf.cell(size, 8, "TEEI", align="C")
    pdf.set_y(y + size + 3)


def _programme_names(certificate: Certificate) -> str:
    return " · ".join(PROGRAMMES[p] for p in certificate.programmes)


def _heading(pdf: ReportPDF, certificate: Certificate, language: str) -> None:
    pdf.font(9.5, bold=True, colour=BRAND)
    pdf.cell(0, 5, pdf.t(ORGANISATION), align="C", **NEXT)
    pdf.font(12, colour=MUTED)
    pdf.cell(0, 6, pdf.t(_programme_names(certificate)), align="C", **NEXT)
    pdf.ln(5)
    pdf.font(28, bold=True)
    pdf.multi_cell(0, 13, pdf.t(translate(language, "Certificate of volunteering")), align="C", **NEXT)
    _rule(pdf, 40, BRAND)
    pdf.ln(7)


def _rule(pdf: ReportPDF, width: float, colour) -> None:
    pdf.set_draw_color(*colour)
    pdf.set_line_width(0.6)
    middle = pdf.w / 2
    pdf.line(middle - width / 2, pdf.get_y() + 3, middle + width / 2, pdf.get_y() + 3)
    pdf.set_line_width(0.2)
    pdf.ln(3)


def _statement(pdf: ReportPDF, certificate: Certificate, language: str) -> None:
    pdf.font(12, colour=MUTED)
    pdf.cell(0, 7, pdf.t(translate(language, "This certifies that")), align="C", **NEXT)
    pdf.ln(1)
    _balanced(pdf, certificate.name, 24, 11, bold=True)
    pdf.font(12, colour=MUTED)
    pdf.multi_cell(
        0, 7, pdf.t(translate(language, "of %(company)s", company=certificate.company_name)), align="C", **NEXT
    )
    pdf.ln(4)
    volunteered = translate_plural(
        language,
        "volunteered %(hours)s hours in %(num)d attended session between %(first)s and %(last)s.",
        "volunteered %(hours)s hours in %(num)d attended sessions between %(first)s and %(last)s.",
        certificate.sessions,
        hours=hours_text(certificate.minutes, language),
        first=day(certificate.period_start, language),
        last=day(certificate.period_end, language),
    )
    _balanced(pdf, volunteered, 12.5, 6.8)
    pdf.ln(6)


def _balanced(
    pdf: ReportPDF, text: str, size: float, line_height: float, column: float = 0, colour=INK, bold: bool = False
) -> None:
    """A centred text in lines of about equal length, rather than a full line and one word under it."""
    pdf.font(size, bold=bold, colour=colour)
    text, column = pdf.t(text), column or pdf.epw
    needed = pdf.get_string_width(text) + 2 * pdf.c_margin
    lines = ceil(needed / column)
    width = column if lines <= 1 else needed / lines
    while width < column and len(pdf.multi_cell(width, line_height, text, dry_run=True, output="LINES")) > lines:
        width += 3  # the narrowest column that still takes the text in that many lines
    width = min(width, column)
    pdf.set_x((pdf.w - width) / 2)
    pdf.multi_cell(width, line_height, text, align="C", **NEXT)


def _figures(pdf: ReportPDF, certificate: Certificate, language: str, goals: bool = True) -> None:
    """The hours and sessions as two large figures, then one row a programme with its goals."""
    tile_w, tile_h, gap = 60, 24, 8
    left = (pdf.w - 2 * tile_w - gap) / 2
    y = pdf.get_y()
    tiles = [
        (hours_text(certificate.minutes, language), translate(language, "hours volunteered")),
        (
            number(certificate.sessions, language),
            translate_plural(language, "attended session", "attended sessions", certificate.sessions),
        ),
    ]
    for index, (value, label) in enumerate(tiles):
        x = left + index * (tile_w + gap)
        pdf.set_fill_color(240, 245, 251)
        pdf.set_draw_color(*LINE)
        pdf.rect(x, y, tile_w, tile_h, style="DF")
        pdf.set_xy(x, y + 2.5)
        pdf.font(22, bold=True, colour=BRAND)
        pdf.cell(tile_w, 11, pdf.t(value), align="C")
        pdf.set_xy(x, y + 14)
        pdf.font(10, colour=MUTED)
        pdf.cell(tile_w, 6, pdf.t(label), align="C")
    pdf.set_y(y + tile_h + 6)
    width = 2 * tile_w + gap
    for programme, (minutes, sessions) in certificate.programmes.items():
        pdf.set_x(left)
        pdf.font(10.5, bold=True)
        pdf.cell(width * 0.5, 6, pdf.t(PROGRAMMES[programme]))
        pdf.font(10.5)
        said = translate_plural(
            language,
            "%(hours)s h · %(num)d session",
            "%(hours)s h · %(num)d sessions",
            sessions,
            hours=hours_text(minutes, language),
        )
        pdf.cell(width * 0.5, 6, pdf.t(said), align="R", **NEXT)
        if goals:
            pdf.set_x(left)
            pdf.font(8.5, colour=MUTED)
            pdf.multi_cell(width, 4.2, pdf.t(sdgs(programme, language)), **NEXT)
        pdf.ln(2)
    said = translate(
        language, "Hours are measured from session attendance recorded by the programme platforms, not entered by hand."
    )
    _balanced(pdf, said, 8.5, 4.2, column=width, colour=MUTED)


# The foot of the page, fixed (mm from the top): the signature, then the verification above the frame.
SIGNATURE_LINE = 232
VERIFICATION_TOP = 251


def _signature(pdf: ReportPDF, certificate: Certificate, language: str) -> None:
    """A line to sign on, for the programme; the issue date beside it."""
    y = SIGNATURE_LINE
    column, left = 76, pdf.l_margin + 2
    right = pdf.w - pdf.r_margin - 2 - column
    pdf.font(12)
    pdf.set_xy(right, y - 7)
    pdf.cell(column, 6, pdf.t(day(certificate.issued_on, language)), align="C")
    pdf.set_draw_color(*MUTED)
    for x in (left, right):
        pdf.line(x, y, x + column, y)
    pdf.font(9, colour=MUTED)
    pdf.set_xy(left, y + 1.5)
    pdf.multi_cell(
        column,
        4.2,
        pdf.t(translate(language, "Signature, for The Educational Equality Institute")),
        align="C",
    )
    pdf.set_xy(right, y + 1.5)
    pdf.cell(column, 4.2, pdf.t(translate(language, "Date of issue")), align="C")


def _verification(pdf: ReportPDF, certificate: Certificate, language: str, url: str) -> None:
    """The certificate's ID, and where anyone it is shown to can check it: the link and its QR code."""
    y = VERIFICATION_TOP
    pdf.set_draw_color(*LINE)
    pdf.line(pdf.l_margin, y - 4, pdf.w - pdf.r_margin, y - 4)
    x = pdf.l_margin
    if url:
        pdf.image(qr_png(url), x=x, y=y, w=QR_SIZE, h=QR_SIZE, link=url)
    text_x = x + (QR_SIZE + 4 if url else 0)
    width = pdf.w - pdf.r_margin - text_x
    pdf.set_xy(text_x, y + 2)
    pdf.font(10, bold=True)
    said = translate(language, "Certificate ID %(certificate_id)s", certificate_id=certificate.certificate_id)
    pdf.multi_cell(width, 5.5, pdf.t(said), **NEXT)
    if url:
        pdf.set_x(text_x)
        pdf.font(9, colour=MUTED)
        check = translate(
            language, "Anyone you show this certificate to can check that TEEI issued it, and its hours, at:"
        )
        pdf.multi_cell(width, 4.6, pdf.t(check), **NEXT)
        pdf.set_x(text_x)
        pdf.font(9, colour=BRAND)
        pdf.multi_cell(width, 4.6, pdf.t(url), link=url, **NEXT)
