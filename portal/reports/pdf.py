"""The filing-ready PDF (fpdf2, pure Python) and an employee's certificate of hours.

The filing PDF carries no names, and hides what its filing mask hides (filing.py, disclosure.py).
"""

from __future__ import annotations

from typing import NamedTuple

from portal.core.programmes import PROGRAMMES
from portal.reports.charts import month_chart, programme_chart
from portal.reports.crosswalk import METHOD, SDGS, crosswalk
from portal.reports.disclosure import ALL, THRESHOLD
from portal.reports.filing import FilingMask
from portal.reports.hours import hours_text, signed_hours_text
from portal.reports.pdf_page import BRAND, HIDDEN, INK, LINE, MUTED, NEXT, ReportPDF, fmt_hours
from portal.reports.report import Report

HIDDEN_NOTE = (
    "hidden: the figure describes fewer than 5 colleagues, or would let such a group be worked out from "
    "the figures shown here or in the company's other filed reports."
)


class View(NamedTuple):
    """The report through its filing mask: which printed figures are hidden."""

    report: Report
    mask: FilingMask
    months: list[str]  # YYYY-MM of every month of the period

    @property
    def first(self) -> str:
        return self.months[0]

    @property
    def last(self) -> str:
        return self.months[-1]

    def total_hidden(self) -> bool:
        return self.mask.hides(self.first, self.last)

    def count_hidden(self, programme: str = ALL) -> bool:
        return self.mask.hides_count(self.first, self.last, programme)

    def programme_hidden(self, programme: str) -> bool:
        return self.mask.hides(self.first, self.last, programme)

    def participation_hidden(self) -> bool:
        return self.count_hidden() or self.mask.hides_employees(self.first, self.last)

    def month_key(self, month) -> str:
        return month.start[:7]

    def any_hidden(self) -> bool:
        return bool(self.mask.hidden or self.mask.counts_hidden)


def filing_pdf(report: Report) -> bytes:
    if report.mask is None:
        raise ValueError("a filing PDF is made from a filed report (reports.filing.file_on gives its mask)")
    f = report.figures
    view = View(report, report.mask, [m.start[:7] for m in f.months])
    pdf = ReportPDF(f"{report.company_name} · report {report.report_id} · as of {report.as_of_local}")
    pdf.alias_nb_pages()
    pdf.add_page()
    _title(pdf, report)
    if not f.total.minutes and not report.closure:
        _nothing_to_file(pdf, report)
        return bytes(pdf.output())
    _headline(pdf, view)
    _charts(pdf, view)
    _month_table(pdf, view)
    _programme_table(pdf, view)
    if report.closure:
        _changes_since_close(pdf, report)
    _methodology(pdf, view)
    return bytes(pdf.output())


def _title(pdf: ReportPDF, report: Report) -> None:
    pdf.font(9, bold=True, colour=BRAND)
    pdf.cell(0, 5, pdf.t("TEEI PARTNER PORTAL · VOLUNTEERING REPORT"), **NEXT)
    pdf.font(19, bold=True)
    pdf.multi_cell(0, 9, pdf.t(report.company_name), **NEXT)
    pdf.font(11, colour=MUTED)
    pdf.multi_cell(
        0,
        6,
        pdf.t(
            f"{report.query.period.label} · {report.query.period.start} to "
            f"{report.query.period.end} ({report.tz}) · {report.query.programme_label}"
        ),
        **NEXT,
    )
    if report.closure:
        pdf.font(9.5, bold=True, colour=INK)
        pdf.multi_cell(
            0,
            5.5,
            pdf.t(
                f"Closed year: filed {report.as_of_local} by {report.closure.closed_by_name}. "
                "These figures do not change."
            ),
            **NEXT,
        )
    pdf.ln(3)


def _headline(pdf: ReportPDF, view: View) -> None:
    report, f = view.report, view.report.figures
    rate = "–" if f.participation is None else f"{f.participation:.1f}%"
    hide_total = view.total_hidden()
    employees = HIDDEN if view.participation_hidden() else f"{f.employees:,}"
    stats = [
        ("Verified hours", HIDDEN if hide_total else fmt_hours(f.total.hours)),
        ("Sessions", HIDDEN if hide_total else f"{f.total.sessions:,}"),
        ("Active volunteers", HIDDEN if view.count_hidden() else f"{f.total.volunteers:,}"),
        (f"Participation, of {employees}", HIDDEN if view.participation_hidden() else rate),
    ]
    box = (pdf.w - pdf.l_margin - pdf.r_margin - 9) / 4
    y = pdf.get_y()
    for index, (label, value) in enumerate(stats):
        x = pdf.l_margin + index * (box + 3)
        pdf.set_draw_color(*LINE)
        pdf.rect(x, y, box, 19)
        pdf.set_xy(x + 3, y + 2.5)
        pdf.font(15, bold=True)
        pdf.cell(box - 6, 8, pdf.t(value))
        pdf.set_xy(x + 3, y + 11)
        pdf.font(8.5, colour=MUTED)
        pdf.cell(box - 6, 5, pdf.t(label))
    pdf.set_y(y + 23)
    pdf.para(
        f"Participation: active volunteers divided by {report.denominator_text}.",
        size=8.5,
        colour=MUTED,
    )


def _nothing_to_file(pdf: ReportPDF, report: Report) -> None:
    pdf.heading("Nothing to file for this period")
    pdf.para(
        f"No attended sessions were recorded for {report.company_name} between {report.query.period.start} and "
        f"{report.query.period.end} ({report.tz}), so this report has no figures: a table of zeros would "
        "only look like data. Hours appear once colleagues have attended their first programme sessions; "
        "choose a period that includes them, or invite colleagues to a programme from the portal."
    )
    pdf.para(f"As of: {report.as_of_local}. Report ID: {report.report_id}.", size=8.5, colour=MUTED)


def _charts(pdf: ReportPDF, view: View) -> None:
    """The charts, where they have something to show; their legend only with a drawn hatched bar."""
    f = view.report.figures
    hidden_months = [view.mask.hides(view.month_key(m), view.month_key(m)) for m in f.listed_months]
    if all(hidden_months) or not f.total.minutes:
        return
    pdf.heading("Hours by month")
    pdf.bars(month_chart(f, hidden_months), hidden_months)
    programmes = list(f.programmes)
    hidden = [view.programme_hidden(p) for p in programmes]
    if len(programmes) > 1 and not all(hidden):
        pdf.bars(programme_chart(f, hidden, total_shown=not view.total_hidden()), hidden)
        if not hidden[1] and f.programmes[programmes[1]].minutes:
            name = PROGRAMMES[programmes[1]].replace("TEEI ", "")
            pdf.para(f"{name} bars are hatched; every bar is labelled with its value.", size=8, colour=MUTED)


def _month_table(pdf: ReportPDF, view: View) -> None:
    f = view.report.figures
    programmes = list(f.programmes)
    pdf.heading("Figures by month and programme")
    header = (
        ["Month"]
        + [f"{PROGRAMMES[p].replace('TEEI ', '')} h" for p in programmes]
        + ["Hours", "Sessions", "Volunteers"]
    )
    rows = []
    for m in f.listed_months:
        key = view.month_key(m)
        row = [m.label] + [
            HIDDEN if view.mask.hides(key, key, p) else fmt_hours(m.programmes[p].hours) for p in programmes
        ]
        hidden = view.mask.hides(key, key)
        row += [
            HIDDEN if hidden else fmt_hours(m.total.hours),
            HIDDEN if hidden else f"{m.total.sessions:,}",
            HIDDEN if view.mask.hides_count(key, key) else f"{m.total.volunteers:,}",
        ]
        rows.append(row)
    total_row = ["Total"] + [
        HIDDEN if view.programme_hidden(p) else fmt_hours(f.programmes[p].hours) for p in programmes
    ]
    hidden = view.total_hidden()
    total_row += [
        HIDDEN if hidden else fmt_hours(f.total.hours),
        HIDDEN if hidden else f"{f.total.sessions:,}",
        HIDDEN if view.count_hidden() else f"{f.total.volunteers:,}",
    ]
    rows.append(total_row)
    width = pdf.w - pdf.l_margin - pdf.r_margin
    pdf.grid(header, rows, [width - 26 * (len(header) - 1)] + [26] * (len(header) - 1))
    if view.any_hidden():
        pdf.para(HIDDEN_NOTE, size=8, colour=MUTED)
    if f.rounding_note:
        pdf.para(f.rounding_note, size=8, colour=MUTED)


def _programme_table(pdf: ReportPDF, view: View) -> None:
    report, f = view.report, view.report.figures
    pdf.heading("By programme")
    prow = []
    for p, cell in f.programmes.items():
        if view.programme_hidden(p):
            prow.append([PROGRAMMES[p]] + [HIDDEN] * 4)
            continue
        count_hidden = view.count_hidden(p)
        prow.append(
            [
                PROGRAMMES[p],
                fmt_hours(cell.hours),
                f"{cell.sessions:,}",
                HIDDEN if count_hidden else f"{cell.volunteers:,}",
                HIDDEN if count_hidden or view.participation_hidden() else report.cell_participation(cell),
            ]
        )
    width = pdf.w - pdf.l_margin - pdf.r_margin
    pdf.grid(["Programme", "Hours", "Sessions", "Volunteers", "Participation"], prow, [width - 4 * 28] + [28] * 4)


def _changes_since_close(pdf: ReportPDF, report: Report) -> None:
    """Corrections after the close are a group like any other: figures only when 5 or more
    colleagues are affected, otherwise only that corrections arrived."""
    pdf.heading("Changes since close")
    c = report.changes
    if not c.any:
        pdf.para("No corrections have arrived since the year was closed.")
    elif c.people >= THRESHOLD:
        pdf.para(
            f"{c.records} session records for this year arrived after the close on "
            f"{report.as_of_local}, for {c.people} colleagues. Live figures now differ from the filed ones by "
            f"{signed_hours_text(c.hours)} hours, {c.sessions:+d} sessions and {c.volunteers:+d} volunteers. "
            "The filed figures above stay as filed; report the difference as a correction in your next filing."
        )
    else:
        pdf.para(
            f"Corrections for this year have arrived since the close on {report.as_of_local}, for fewer than "
            f"{THRESHOLD} colleagues, so their size is not shown here. The filed figures above stay as filed; "
            "the portal's report page shows the live figures to the company's managers."
        )


def _methodology(pdf: ReportPDF, view: View) -> None:
    report = view.report
    pdf.heading("Methodology")
    for text in METHOD:
        pdf.para(text)
    pdf.para(
        f"Period: {report.query.period.start} to {report.query.period.end}, whole days in {report.tz}. "
        f"As of: {report.as_of_local}. Report ID: {report.report_id}. Data source: attendance records from "
        "TEEI Language and TEEI Mentorship. "
        + ("" if report.closure else "Filed figures do not change when a later copy of this PDF is made.")
    )
    pdf.heading("Framework crosswalk")
    for framework, asks, gives in crosswalk(
        report, hide_total=view.total_hidden(), hide_volunteers=view.count_hidden()
    ):
        if pdf.get_y() > pdf.h - 40:
            pdf.add_page()
        pdf.font(10, bold=True)
        pdf.cell(0, 6, pdf.t(framework), **NEXT)
        pdf.para(asks, size=8.5, colour=MUTED)
        pdf.para(gives)


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
) -> bytes:
    pdf = ReportPDF(f"Certificate {certificate_id} · issued {issued}")
    pdf.alias_nb_pages()
    pdf.add_page()
    pdf.ln(20)
    pdf.font(10, bold=True, colour=BRAND)
    pdf.cell(0, 6, pdf.t("THE EDUCATIONAL EQUALITY INSTITUTE"), align="C", **NEXT)
    pdf.ln(6)
    pdf.font(26, bold=True)
    pdf.cell(0, 14, pdf.t("Certificate of volunteering"), align="C", **NEXT)
    pdf.ln(8)
    pdf.font(12, colour=MUTED)
    pdf.cell(0, 7, pdf.t("This certifies that"), align="C", **NEXT)
    pdf.font(20, bold=True)
    pdf.multi_cell(0, 11, pdf.t(name), align="C", **NEXT)
    pdf.font(12, colour=MUTED)
    pdf.multi_cell(0, 7, pdf.t(f"of {company}"), align="C", **NEXT)
    pdf.ln(6)
    total = sum(minutes_by_programme.values())
    pdf.font(14)
    span = f" between {first} and {last}" if first and last else ""
    pdf.multi_cell(
        0,
        8,
        pdf.t(
            f"volunteered {hours_text(total)} hours in {sessions} attended session{'' if sessions == 1 else 's'}{span}."
        ),
        align="C",
        **NEXT,
    )
    pdf.ln(4)
    for programme, minutes in minutes_by_programme.items():
        pdf.font(11)
        pdf.multi_cell(
            0,
            6.5,
            pdf.t(f"{PROGRAMMES[programme]}: {hours_text(minutes)} hours · {SDGS[programme]}"),
            align="C",
            **NEXT,
        )
    pdf.ln(10)
    pdf.para(
        "Hours are measured from session attendance recorded by the programme platforms, not entered by hand.",
        size=9,
        colour=MUTED,
    )
    return bytes(pdf.output())
