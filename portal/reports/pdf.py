"""The filing-ready PDF (fpdf2, pure Python); an employee's certificate of hours is certificate.py.

The filing PDF carries no names, and hides what its filing mask hides (filing.py, disclosure.py).
It is written in one language, passed down to every part: the manager's who downloads it (or
receives it by email).
"""

from __future__ import annotations

from decimal import Decimal

from portal.core.i18n import ENGLISH, N_, day, number, percent, signed_number, translate
from portal.core.programmes import PROGRAMMES
from portal.reports.charts import month_chart, programme_chart
from portal.reports.crosswalk import crosswalk, method
from portal.reports.disclosure import ALL, DOMINANCE, THRESHOLD
from portal.reports.figures import DENOMINATOR_TEXT, counted_time_text
from portal.reports.goals import BENCHMARK
from portal.reports.hours import ROUNDING_NOTE, hours_of, rounding_gap, signed_hours_text
from portal.reports.labels import month_row_label, period_label
from portal.reports.masked import View, view_of
from portal.reports.pdf_page import BRAND, HIDDEN, INK, LINE, MUTED, NEXT, ReportPDF, fmt_hours, qr_png
from portal.reports.report import Report

HIDDEN_NOTE = N_(
    "hidden: the figure describes fewer than 5 colleagues, or one colleague gave %(share)s%% or more of its hours, or "
    "it would let such a figure be worked out from the figures shown here or in the company's other filed "
    "reports, also by a colleague who knows their own hours."
)


def filing_pdf(report: Report, language: str = ENGLISH, verify_url: str | None = None) -> bytes:
    """`verify_url`: the public page that confirms this filing (filing.verify_url), printed with its
    QR code under the title."""
    if report.mask is None:
        raise ValueError("a filing PDF is made from a filed report (reports.filing.file_on gives its mask)")
    f = report.figures
    view = view_of(report)
    footer = translate(
        language,
        "%(company)s · report %(report_id)s · as of %(as_of)s",
        company=report.company_name,
        report_id=report.report_id,
        as_of=report.as_of_in(language),
    )
    pdf = ReportPDF(footer, language)
    pdf.alias_nb_pages()
    pdf.add_page()
    _title(pdf, report, language)
    if verify_url:
        _verify(pdf, report, verify_url, language)
    if not f.total.minutes and not report.closure:
        _nothing_to_file(pdf, report, language)
        return bytes(pdf.output())
    _headline(pdf, view, language)
    _comparison(pdf, view, language)
    _charts(pdf, view, language)
    _month_table(pdf, view, language)
    _programme_table(pdf, view, language)
    _corrections(pdf, report, language)
    _methodology(pdf, view, language)
    return bytes(pdf.output())


def _title(pdf: ReportPDF, report: Report, language: str) -> None:
    period = report.query.period
    pdf.font(9, bold=True, colour=BRAND)
    pdf.cell(0, 5, pdf.t(translate(language, "TEEI PARTNER PORTAL · VOLUNTEERING REPORT")), **NEXT)
    pdf.font(19, bold=True)
    pdf.multi_cell(0, 9, pdf.t(report.company_name), **NEXT)
    pdf.font(11, colour=MUTED)
    pdf.multi_cell(
        0,
        6,
        pdf.t(
            translate(
                language,
                "%(period)s · %(start)s to %(end)s (%(zone)s) · %(programmes)s",
                period=period_label(period, language),
                start=day(period.start, language),
                end=day(period.end, language),
                zone=report.tz,
                programmes=report.query.programme_label_in(language),
            )
        ),
        **NEXT,
    )
    if report.closure:
        pdf.font(9.5, bold=True, colour=INK)
        pdf.multi_cell(
            0,
            5.5,
            pdf.t(
                translate(
                    language,
                    "Closed year: filed %(as_of)s by %(name)s. These figures do not change.",
                    as_of=report.as_of_in(language),
                    name=report.closure.closed_by_name,
                )
            ),
            **NEXT,
        )
    pdf.ln(3)


QR_SIZE = 24  # mm: a phone reads it from a printed page


def _verify(pdf: ReportPDF, report: Report, url: str, language: str) -> None:
    """The filing's ID, and where anyone can check it: the link and its QR code."""
    x, y = pdf.l_margin, pdf.get_y()
    pdf.image(qr_png(url), x=x, y=y, w=QR_SIZE, h=QR_SIZE, link=url)
    text_x, width = x + QR_SIZE + 4, pdf.epw - QR_SIZE - 4
    pdf.set_xy(text_x, y + 2)
    pdf.font(9.5, bold=True)
    pdf.multi_cell(width, 5, pdf.t(translate(language, "Report ID %(report_id)s", report_id=report.report_id)), **NEXT)
    pdf.set_x(text_x)
    pdf.font(8.5, colour=MUTED)
    said = translate(
        language,
        "Every copy of this filed report states this ID. Anyone can check that it was filed, and its totals, at:",
    )
    pdf.multi_cell(width, 4.4, pdf.t(said), **NEXT)
    pdf.set_x(text_x)
    pdf.font(8.5, colour=BRAND)
    pdf.multi_cell(width, 4.4, pdf.t(url), link=url, **NEXT)
    pdf.set_y(max(pdf.get_y(), y + QR_SIZE) + 4)


def _headline(pdf: ReportPDF, view: View, language: str) -> None:
    f = view.report.figures
    hidden = translate(language, HIDDEN)
    rate = "–" if f.participation is None else percent(f.participation, language, 1)
    hide_total = view.total_hidden()
    participation = (  # "of hidden" says nothing: a hidden denominator is not named
        translate(language, "Participation")
        if view.participation_hidden()
        else translate(language, "Participation, of %(employees)s", employees=number(f.employees, language))
    )
    stats = [
        (translate(language, "Verified hours"), hidden if hide_total else fmt_hours(f.total.hours, language)),
        (translate(language, "Sessions"), hidden if hide_total else number(f.total.sessions, language)),
        (
            translate(language, "Active volunteers"),
            hidden if view.count_hidden() else number(f.total.volunteers, language),
        ),
        (participation, hidden if view.participation_hidden() else rate),
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
        translate(
            language,
            "Participation: active volunteers divided by %(denominator)s.",
            denominator=translate(language, DENOMINATOR_TEXT),
        ),
        size=8.5,
        colour=MUTED,
    )
    pdf.para(counted_time_text(f, language, masked=True, count_hidden=view.count_hidden()), size=8.5, colour=MUTED)


def _comparison(pdf: ReportPDF, view: View, language: str) -> None:
    """The year's goal and the same period last year, as the filing stored them (goals.py), hidden as
    the figures they come from: a change only where both of its figures are shown."""
    report = view.report
    goals, lines, note = view.comparison(language)
    if not goals and not lines and not note:
        return
    pdf.heading(translate(language, "Goals and the year before"))
    for line in goals:
        pdf.para(line)
    if note:
        pdf.para(note, size=8.5, colour=MUTED)
    if lines:
        b = report.comparison.before
        header = [
            translate(language, "Figure"),
            translate(language, "This period"),
            translate(language, "%(start)s to %(end)s", start=b.start, end=b.end),
            translate(language, "Change"),
        ]
        width = pdf.w - pdf.l_margin - pdf.r_margin
        pdf.grid(header, [[x.name, x.now, x.before, x.change] for x in lines], [width - 3 * 40] + [40] * 3)
        if b.report_id:
            pdf.para(
                translate(language, "Last year as filed in report %(report_id)s.", report_id=b.report_id),
                size=8,
                colour=MUTED,
            )


def _nothing_to_file(pdf: ReportPDF, report: Report, language: str) -> None:
    pdf.heading(translate(language, "Nothing to file for this period"))
    pdf.para(
        translate(
            language,
            "No attended sessions were recorded for %(company)s between %(start)s and %(end)s (%(zone)s), so "
            "this report has no figures: a table of zeros would only look like data. Hours appear once "
            "colleagues have attended their first programme sessions; choose a period that includes them, or "
            "invite colleagues to a programme from the portal.",
            company=report.company_name,
            start=day(report.query.period.start, language),
            end=day(report.query.period.end, language),
            zone=report.tz,
        )
    )
    pdf.para(
        translate(
            language,
            "As of: %(as_of)s. Report ID: %(report_id)s.",
            as_of=report.as_of_in(language),
            report_id=report.report_id,
        ),
        size=8.5,
        colour=MUTED,
    )


def _charts(pdf: ReportPDF, view: View, language: str) -> None:
    """The charts, where they have something to show; their legend only with a drawn hatched bar."""
    f = view.report.figures
    hidden_months = [view.mask.hides(view.month_key(m), view.month_key(m)) for m in f.listed_months]
    if all(hidden_months) or not f.total.minutes:
        return
    pdf.heading(translate(language, "Hours by month"))
    pdf.bars(month_chart(f, hidden_months, language), hidden_months)
    programmes = list(f.programmes)
    hidden = [view.programme_hidden(p) for p in programmes]
    if len(programmes) > 1 and not all(hidden):
        pdf.bars(programme_chart(f, hidden, total_shown=not view.total_hidden(), language=language), hidden)
        if not hidden[1] and f.programmes[programmes[1]].minutes:
            name = PROGRAMMES[programmes[1]].replace("TEEI ", "")
            pdf.para(
                translate(
                    language, "%(programme)s bars are hatched; every bar is labelled with its value.", programme=name
                ),
                size=8,
                colour=MUTED,
            )


def _month_table(pdf: ReportPDF, view: View, language: str) -> None:
    f = view.report.figures
    hidden_text = translate(language, HIDDEN)
    programmes = list(f.programmes)
    pdf.heading(translate(language, "Figures by month and programme"))
    header = (
        [translate(language, "Month")]
        + [translate(language, "%(programme)s h", programme=PROGRAMMES[p].replace("TEEI ", "")) for p in programmes]
        + [translate(language, "Hours"), translate(language, "Sessions"), translate(language, "Volunteers")]
    )
    rows = []
    for m in f.listed_months:
        key = view.month_key(m)
        row = [month_row_label(m, language)] + [
            hidden_text if view.mask.hides(key, key, p) else fmt_hours(m.programmes[p].hours, language)
            for p in programmes
        ]
        hidden = view.mask.hides(key, key)
        row += [
            hidden_text if hidden else fmt_hours(m.total.hours, language),
            hidden_text if hidden else number(m.total.sessions, language),
            hidden_text if view.mask.hides_count(key, key) else number(m.total.volunteers, language),
        ]
        rows.append(row)
    total_row = [translate(language, "Total")] + [
        hidden_text if view.programme_hidden(p) else fmt_hours(f.programmes[p].hours, language) for p in programmes
    ]
    hidden = view.total_hidden()
    total_row += [
        hidden_text if hidden else fmt_hours(f.total.hours, language),
        hidden_text if hidden else number(f.total.sessions, language),
        hidden_text if view.count_hidden() else number(f.total.volunteers, language),
    ]
    rows.append(total_row)
    width = pdf.w - pdf.l_margin - pdf.r_margin
    pdf.grid(header, rows, [width - 26 * (len(header) - 1)] + [26] * (len(header) - 1), bold_last=True)
    if view.any_hidden():
        pdf.para(translate(language, HIDDEN_NOTE, share=DOMINANCE), size=8, colour=MUTED)
    note = _rounding_note(view, language)
    if note:
        pdf.para(note, size=8, colour=MUTED)


def _rounding_note(view: View, language: str) -> str | None:
    """The rounding footnote, from the sums whose total and every row are shown: a gap measured over a
    hidden figure would tell its exact minutes modulo 3 (a lone volunteer's, say)."""
    f, mask = view.report.figures, view.mask
    first, last = view.first, view.last
    months = list(zip(view.months, f.months, strict=True))
    sums = [
        (
            [m.total.minutes for _, m in months],
            f.total.minutes,
            [(k, k, ALL) for k, _ in months] + [(first, last, ALL)],
        ),
        (
            [c.minutes for c in f.programmes.values()],
            f.total.minutes,
            [(first, last, p) for p in f.programmes] + [(first, last, ALL)],
        ),
        *(
            ([c.minutes for c in m.programmes.values()], m.total.minutes, [(k, k, p) for p in [*m.programmes, ALL]])
            for k, m in months
        ),
        *(
            (
                [m.programmes[p].minutes for _, m in months],
                c.minutes,
                [(k, k, p) for k, _ in months] + [(first, last, p)],
            )
            for p, c in f.programmes.items()
        ),
    ]
    gaps = [rounding_gap(rows, total) for rows, total, areas in sums if not any(mask.hides(*a) for a in areas)]
    largest = max((abs(g) for g in gaps), default=Decimal(0))
    return translate(language, ROUNDING_NOTE, gap=number(largest, language, 2)) if largest else None


def _programme_table(pdf: ReportPDF, view: View, language: str) -> None:
    report, f = view.report, view.report.figures
    hidden_text = translate(language, HIDDEN)
    pdf.heading(translate(language, "By programme"))
    prow = []
    for p, cell in f.programmes.items():
        if view.programme_hidden(p):
            prow.append([PROGRAMMES[p]] + [hidden_text] * 4)
            continue
        count_hidden = view.count_hidden(p)
        prow.append(
            [
                PROGRAMMES[p],
                fmt_hours(cell.hours, language),
                number(cell.sessions, language),
                hidden_text if count_hidden else number(cell.volunteers, language),
                hidden_text
                if count_hidden or view.participation_hidden()
                else report.cell_participation(cell, language),
            ]
        )
    width = pdf.w - pdf.l_margin - pdf.r_margin
    header = [
        translate(language, "Programme"),
        translate(language, "Hours"),
        translate(language, "Sessions"),
        translate(language, "Volunteers"),
        translate(language, "Participation"),
    ]
    pdf.grid(header, prow, [width - 4 * 28] + [28] * 4)


def _corrections(pdf: ReportPDF, report: Report, language: str) -> None:
    """What this filing states of late records for months an earlier filing printed (fixed with the
    filing: a group like any other, sized only for 5 or more colleagues); a closed year adds that
    later corrections are on the report page, not in it. Nothing here is read at the download."""
    c = report.corrections
    if c is None and not report.closure:
        return
    pdf.heading(translate(language, "Corrections"))
    if c is not None and c.shown:
        pdf.para(
            translate(
                language,
                "Months that an earlier filing printed are printed here as first filed. %(records)s session "
                "records for them arrived after that filing, for %(people)s colleagues: %(hours)s hours and "
                "%(sessions)s sessions, which are not in the figures above. Add them to the filed figures.",
                records=c.records,
                people=c.people,
                hours=signed_hours_text(hours_of(c.minutes), language),
                sessions=signed_number(c.sessions, language, 0),
            )
        )
    elif c is not None:
        pdf.para(
            translate(
                language,
                "Months that an earlier filing printed are printed here as first filed. Session records for them "
                "arrived after that filing, for fewer than %(threshold)s colleagues, so their size is hidden; "
                "they are stated with the next filing of those months that concerns %(threshold)s colleagues or more.",
                threshold=THRESHOLD,
            )
        )
    if report.closure:
        pdf.para(
            translate(
                language,
                "Corrections that arrive after the close are not part of this filing: the portal's report page "
                "shows them to the company's managers.",
            )
        )


def _methodology(pdf: ReportPDF, view: View, language: str) -> None:
    report = view.report
    pdf.heading(translate(language, "Methodology"))
    for text in method(language):
        pdf.para(text)
    pdf.para(translate(language, BENCHMARK))
    values = {
        "start": day(report.query.period.start, language),
        "end": day(report.query.period.end, language),
        "zone": report.tz,
        "as_of": report.as_of_in(language),
        "report_id": report.report_id,
    }
    if report.closure:
        text = translate(
            language,
            "Period: %(start)s to %(end)s, whole days in %(zone)s. As of: %(as_of)s. Report ID: %(report_id)s. "
            "Data source: attendance records from TEEI Language and TEEI Mentorship.",
            **values,
        )
    else:
        text = translate(
            language,
            "Period: %(start)s to %(end)s, whole days in %(zone)s. As of: %(as_of)s. Report ID: %(report_id)s. "
            "Data source: attendance records from TEEI Language and TEEI Mentorship. Filed figures do not "
            "change when a later copy of this PDF is made.",
            **values,
        )
    pdf.para(text)
    pdf.heading(translate(language, "Framework crosswalk"))
    for framework, asks, gives in crosswalk(
        report, language=language, hide_total=view.total_hidden(), hide_volunteers=view.count_hidden()
    ):
        if pdf.get_y() > pdf.h - 40:
            pdf.add_page()
        pdf.font(10, bold=True)
        pdf.cell(0, 6, pdf.t(framework), **NEXT)
        pdf.para(asks, size=8.5, colour=MUTED)
        pdf.para(gives)
