"""The report pages: thin views over forms.py (input), report.py/queries.py (reads) and operations.py (writes).
The report emails page is the report_emails area's.

Company scope comes only from `current_company_id()`; no query parameter names a company.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from datetime import date

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, send_file, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal.core.clock import now_iso, parse
from portal.core.i18n import day
from portal.core.periods import closable_years, presets, report_timezone, today_in
from portal.core.programmes import BOOKING_URLS, PROGRAMMES
from portal.reports import certificate as certificates
from portal.reports import charts, exports, operations, pdf, queries, xlsx
from portal.reports.crosswalk import crosswalk, method
from portal.reports.filing import NOT_FILED, REPORT_ID_FORM, filing_period, verify_url
from portal.reports.forms import QueryErrors, ReportSettingsForm, parse_report_query
from portal.reports.hours import hours_text
from portal.reports.labels import month_names, month_row_label, name_label, period_label
from portal.reports.masked import view_of
from portal.reports.report import build_report, filed_report_by_id, filing_for, read_report_page
from portal.reports.selection import ReportQuery
from portal.web.access import current_company_id, public, roles_required
from portal.web.extensions import limiter, portal_context
from portal.web.forms import ConfirmedForm
from portal.web.i18n import current_language

bp = Blueprint("reports", __name__)

VERIFY_LIMIT = "60 per hour"  # per client network: an auditor checks a few IDs, a guesser many
PAGE_VOLUNTEERS = 200  # the page lists the top volunteers by hours; `volunteers=all` lists everyone

MIMETYPES = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pdf": "application/pdf",
}


@bp.app_template_filter("hours")
def hours_filter(minutes: int) -> str:
    """Exact minutes as the hours every report page shows: two decimals, half up, in the page's language."""
    return hours_text(minutes, current_language())


@bp.app_template_filter("local_time")
def local_time(held_at: str, tz) -> str:
    """A stored UTC time as the local date and time the report uses, in the pages' one date format."""
    moment = parse(held_at).astimezone(tz)
    return f"{day(moment.date(), current_language())}, {moment:%H:%M}"


@bp.app_template_filter("period_label")
def period_label_filter(period) -> str:
    """A period's name (a quick period, a month, a quarter, a year) in the page's language."""
    return period_label(period, current_language())


@bp.app_template_filter("year_label")
def year_label_filter(label: str) -> str:
    """A closed year's stored name (2025, FY 2025/26) in the page's language."""
    return name_label(label, current_language())


@bp.app_template_filter("month_label")
def month_label_filter(row) -> str:
    """A month row of the report's figures, named in the page's language (Oct 2026 / okt. 2026)."""
    return month_row_label(row, current_language())


def _scope():
    tz = report_timezone(portal_context().settings)
    company_id = current_company_id()
    settings = queries.report_settings(portal_context().db, company_id=company_id)
    return tz, company_id, settings, today_in(tz)


def _parse(today: date, settings):
    return parse_report_query(request.args, today, settings.fiscal_year_start_month)


def _build(db, company_id: int, query, tz, facts: bool = False):
    return build_report(
        db, company_id=company_id, company_name=current_user.company_name, query=query, tz=tz, facts=facts
    )


def _since_start(periods, started_on: date) -> list:
    """Only periods that reach the company's start: a company that joined today has no last year."""
    return [p for p in periods if p.end >= started_on]


def _error_page(errors: QueryErrors, today: date, settings, start: queries.CompanyStart):
    return render_template(
        "reports/index.html",
        errors=errors.messages,
        values=errors.values,
        report=None,
        start=start,
        presets=_since_start(presets(today, settings.fiscal_year_start_month), start.started_on),
        programmes=PROGRAMMES,
        settings=settings,
    ), 400


@bp.get("/reports")
@roles_required("manager")
def index():
    tz, company_id = report_timezone(portal_context().settings), current_company_id()
    today = today_in(tz)
    settings, query, report, start = read_report_page(
        portal_context().db,
        company_id=company_id,
        company_name=current_user.company_name,
        tz=tz,
        choose_query=lambda settings: _parse(today, settings),
    )
    if isinstance(query, QueryErrors):
        return _error_page(query, today, settings, start)
    listed = report.figures.volunteers
    shown = listed if request.args.get("volunteers") == "all" else listed[:PAGE_VOLUNTEERS]
    offered = _since_start(presets(today, settings.fiscal_year_start_month), start.started_on)
    fiscal = settings.fiscal_year_start_month
    filed_as = query.programme == "all" and filing_period(query.period, today, fiscal)
    files = bool(filed_as)
    # A filed period: the page states the filing's ID, the one on its every PDF and report email.
    filing = filing_for(portal_context().db, company_id=company_id, period=filed_as) if filed_as else None
    language = current_language()
    return render_template(
        "reports/index.html",
        report=report,
        errors=[],
        values=query.args,
        programmes=PROGRAMMES,
        shown=shown,
        start=start,
        presets=offered,
        filing_presets=[p for p in offered if filing_period(p, today, fiscal)],
        files=files,
        filing=filing,
        settings=settings,
        month_svg=charts.svg(charts.month_chart(report.figures, language=language)),
        programme_svg=charts.svg(charts.programme_chart(report.figures, language=language)),
        method=method(language),
        crosswalk=crosswalk(report, language=language),
        departments=queries.hours_by_department(portal_context().db, company_id=company_id, volunteers=listed),
    )


@bp.get("/reports/settings")
@roles_required("manager")
def settings_page():
    _tz, _company_id, settings, _today = _scope()
    return _settings_page(ReportSettingsForm.of(settings, months=month_names(current_language())))


def _settings_page(form: ReportSettingsForm, status: int = 200):
    tz, company_id, settings, today = _scope()
    db = portal_context().db
    start = queries.company_start(db, company_id=company_id, tz=tz)
    closed = {c.period_start: c for c in queries.closures(db, company_id=company_id)}
    years = _since_start(closable_years(today, settings.fiscal_year_start_month), start.started_on)
    return render_template(
        "reports/settings.html",
        form=form,
        start=start,
        years=[(p, closed.get(p.start.isoformat())) for p in years],
    ), status


@bp.get("/reports/export.<any(csv, xlsx, pdf):fmt>")
@roles_required("manager")
def export(fmt: str):
    tz, company_id, settings, today = _scope()
    query = _parse(today, settings)
    db = portal_context().db
    if isinstance(query, QueryErrors):
        return _error_page(query, today, settings, queries.company_start(db, company_id=company_id, tz=tz))
    name = f"teei-report-{query.period.start}-{query.period.end}-{query.programme}.{fmt}"
    headers = {"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "private, no-store"}
    if fmt == "pdf":
        period = filing_period(query.period, today, settings.fiscal_year_start_month)
        if period is None or query.programme != "all":
            start = queries.company_start(db, company_id=company_id, tz=tz)
            return _error_page(QueryErrors([_(NOT_FILED)], query.args), today, settings, start)
        report = _build(db, company_id, ReportQuery(period, "all"), tz, facts=True)
        filed = operations.file_download(
            db, company_id=company_id, period=period, figures=report.figures, tz=tz, now=now_iso()
        )
        # Every copy states the filing's one ID and, outside a closed year, the moment it was filed.
        as_of = report.as_of if report.closure else filed.filed_at
        report = replace(
            report,
            figures=filed.figures,
            mask=filed.mask,
            corrections=filed.corrections,
            report_id=filed.report_id,
            as_of=as_of,
        )
        body = pdf.filing_pdf(
            report,
            current_language(),
            verify_url=verify_url(portal_context().settings.public_base_url, filed.report_id),
        )
        return Response(body, mimetype=MIMETYPES["pdf"], headers=headers)
    report = _build(db, company_id, query, tz)
    sessions = queries.iter_sessions(db, company_id=company_id, query=query, tz=tz)
    if fmt == "csv":
        lines = exports.csv_lines(report, sessions, current_language())
        return Response(lines, mimetype=MIMETYPES["csv"], headers=headers)
    response = send_file(
        xlsx.write_xlsx(report, sessions, current_language()),
        mimetype=MIMETYPES["xlsx"],
        as_attachment=True,
        download_name=name,
    )
    response.headers["Cache-Control"] = "private, no-store"
    return response


@bp.post("/reports/settings")
@roles_required("manager")
def save_settings():
    form = ReportSettingsForm(months=month_names(current_language()))
    if not form.validate_on_submit():
        return _settings_page(form, 400)  # what was typed stays, each message next to its field
    operations.save_settings(
        portal_context().db, company_id=current_company_id(), actor_id=current_user.id, values=form.settings()
    )
    flash(_("Report settings saved."), "success")
    return redirect(url_for("reports.settings_page") + "#settings")


@bp.route("/reports/close", methods=["GET", "POST"])
@roles_required("manager")
def close_year():
    """Close a year for filing. The settings page links here (`period_start` in the query): this
    page says what freezes and that it is final; only its "Yes" (`confirmed=yes`) closes the year."""
    tz, company_id, settings, today = _scope()
    form = ConfirmedForm()
    wanted = (request.form if request.method == "POST" else request.args).get("period_start", "")
    period = next(
        (p for p in closable_years(today, settings.fiscal_year_start_month) if p.start.isoformat() == wanted), None
    )
    if period is None:
        flash(_("Choose a year that has ended."), "error")
        return redirect(url_for("reports.settings_page") + "#close")
    if request.method == "GET" or not form.validate_on_submit() or not form.is_confirmed:
        closed = {c.period_start: c for c in queries.closures(portal_context().db, company_id=company_id)}
        if wanted in closed:
            return redirect(url_for("reports.index", **period.query))
        return render_template("reports/confirm_close.html", period=period, settings=settings)
    try:
        report_id = operations.close_year(
            portal_context().db,
            company_id=company_id,
            actor_id=current_user.id,
            period=period,
            today=today,
            tz=tz,
            settings_snapshot=asdict(settings),
        )
    except operations.CloseError as error:
        # The operation's message, in the page's language, with the year named in it too.
        flash(_(error.message, **{**error.values, "year": period_label(period, current_language())}), "error")
        return redirect(url_for("reports.settings_page") + "#close")
    flash(
        _(
            "%(year)s is closed. Its filed report is %(report_id)s; it will not change.",
            year=period_label(period, current_language()),
            report_id=report_id,
        ),
        "success",
    )
    return redirect(url_for("reports.index", **period.query))


@bp.get("/verify/<report_id>")
@limiter.limit(VERIFY_LIMIT, scope="verify")
@public
def verify(report_id: str):
    """Anyone: confirms that a report with this ID was filed, for which company and period, with its
    totals as filed, hidden exactly as its filing hides them. An unknown ID is a plain 404 page."""
    wanted = report_id.strip().upper()
    tz = report_timezone(portal_context().settings)
    report = filed_report_by_id(portal_context().db, report_id=wanted, tz=tz) if REPORT_ID_FORM.match(wanted) else None
    if report is None:
        return render_template("reports/verify_unknown.html", report_id=report_id[:80]), 404
    return render_template("reports/verify.html", report=report, view=view_of(report), programmes=PROGRAMMES)


@bp.get("/reports/volunteers/<int:user_id>")
@roles_required("manager")
def volunteer(user_id: int):
    tz = report_timezone(portal_context().settings)
    found = queries.volunteer_sessions(portal_context().db, company_id=current_company_id(), user_id=user_id)
    if found is None:
        abort(404)  # another company's colleague looks exactly like a missing one
    person, sessions = found
    return render_template("reports/volunteer.html", person=person, sessions=sessions, tz=tz, programmes=PROGRAMMES)


@bp.get("/company")
@roles_required("manager")
def old_overview():
    return redirect(url_for("reports.index"), 301)


@bp.get("/company/employees/<int:user_id>")
@roles_required("manager")
def old_employee(user_id: int):
    return redirect(url_for("reports.volunteer", user_id=user_id), 301)


@bp.get("/me/hours")
@roles_required("employee")
def my_hours():
    tz = report_timezone(portal_context().settings)
    sessions = queries.own_sessions(portal_context().db, user_id=current_user.id)
    counted = [s for s in sessions if s.status == "attended"]
    by_programme = {p: sum(s.minutes for s in counted if s.platform == p) for p in PROGRAMMES}
    return render_template(
        "reports/my_hours.html",
        sessions=sessions,
        counted=len(counted),
        tz=tz,
        minutes=sum(by_programme.values()),
        by_programme=by_programme,
        programmes=PROGRAMMES,
        booking_urls=BOOKING_URLS,
    )


@bp.get("/me/hours/certificate.pdf")
@roles_required("employee")
def certificate():
    tz = report_timezone(portal_context().settings)
    counted = [s for s in queries.own_sessions(portal_context().db, user_id=current_user.id) if s.status == "attended"]
    by_programme = {p: m for p in PROGRAMMES if (m := sum(s.minutes for s in counted if s.platform == p))}
    local = sorted(queries.local_date(s.held_at, tz) for s in counted)
    issued = today_in(tz).isoformat()
    body = certificates.certificate_pdf(
        name=current_user.name or current_user.email,
        company=current_user.company_name or "",
        minutes_by_programme=by_programme,
        sessions=len(counted),
        first=local[0] if local else None,
        last=local[-1] if local else None,
        issued=issued,
        certificate_id=f"TEEI-C{current_user.id}-{now_iso()[:10].replace('-', '')}",
        language=current_language(),
    )
    return Response(
        body,
        mimetype="application/pdf",
        headers={
            "Content-Disposition": 'attachment; filename="teei-volunteering-certificate.pdf"',
            "Cache-Control": "private, no-store",
        },
    )
