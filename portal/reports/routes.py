"""The report pages: thin views over forms.py (input), report.py/queries.py (reads) and operations.py (writes).
The report emails page is the report_emails area's.

Company scope comes only from `current_company_id()`; no query parameter names a company.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from datetime import date
from typing import NamedTuple
from urllib.parse import urlencode

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, send_file, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal.core.clock import now_iso, parse
from portal.core.i18n import N_, day
from portal.core.periods import add_months, closable_years, fiscal_year_containing, presets, report_timezone, today_in
from portal.core.programmes import BOOKING_URLS, PROGRAMMES
from portal.reports import certificate as certificates
from portal.reports import charts, exports, operations, pack, pdf, queries, xlsx
from portal.reports.certificate import CERTIFICATE_ID_FORM
from portal.reports.crosswalk import crosswalk, method
from portal.reports.figures import counted_time_text
from portal.reports.filing import NOT_FILED, REPORT_ID_FORM, filing_period, verify_url
from portal.reports.forms import (
    CertificateForm,
    GoalsForm,
    OwnTimeForm,
    QueryErrors,
    ReportSettingsForm,
    parse_drill,
    parse_report_query,
)
from portal.reports.goals import BENCHMARK
from portal.reports.hours import hours_text
from portal.reports.labels import describe_in, month_names, month_row_label, name_label, period_label
from portal.reports.masked import masked_view, view_of
from portal.reports.report import Report, build_report, filed_report_by_id, filing_for, read_report_page
from portal.reports.selection import ReportQuery
from portal.web.access import current_company_id, public, roles_required
from portal.web.extensions import limiter, portal_context
from portal.web.forms import ConfirmedForm
from portal.web.i18n import current_language
from portal.web.paging import page_number

bp = Blueprint("reports", __name__)

READ_ONLY_PERIODS = N_(
    "TEEI sees a company's report as its filing states it: choose a whole month, quarter or year that has ended."
)

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


class FigureLinks:
    """Where each figure of the report page leads: the list of the session records it counts, by
    the report's query narrowed to a month, a programme, a colleague or a department (selection.Drill)."""

    def __init__(self, query: ReportQuery, *, opens: bool = True):
        self.query = query
        self.opens = opens  # False: TEEI's read-only view, which opens no session records
        self.base = url_for("reports.sessions")
        # Thousands of volunteer rows: one prefix, then the colleague's id appended.
        self.volunteer_prefix = f"{self.base}?{urlencode(query.args)}&volunteer="

    def __call__(self, programme: str | None = None, month=None, department: str | None = None) -> str | None:
        if not self.opens:
            return None
        period = self.query.period
        args = {
            "from": month.start if month else period.start.isoformat(),
            "to": month.end if month else period.end.isoformat(),
            "programme": programme or self.query.programme,
        }
        if department is not None:
            args["department"] = department
        return f"{self.base}?{urlencode(args)}"


def _since_start(periods, started_on: date) -> list:
    """Only periods that reach the company's start: a company that joined today has no last year."""
    return [p for p in periods if p.end >= started_on]


def _error_page(errors: QueryErrors, today: date, settings, start: queries.CompanyStart, **page):
    page = {
        "company_name": current_user.company_name,
        "read_only": False,
        "report_endpoint": "reports.index",
        "report_scope": {},
        **page,
    }
    return render_template(
        "reports/index.html",
        errors=errors.messages,
        values=errors.values,
        report=None,
        start=start,
        presets=[
            p
            for p in _since_start(presets(today, settings.fiscal_year_start_month), start.started_on)
            if not page["read_only"] or filing_period(p, today, settings.fiscal_year_start_month)
        ],
        programmes=PROGRAMMES,
        settings=settings,
        **page,
    ), 400


@bp.get("/reports")
@roles_required("manager")
def index():
    return _report_page(current_company_id(), current_user.company_name)


@bp.get("/admin/companies/<int:company_id>/report")
@roles_required("admin")
def company_report(company_id: int):
    """TEEI's admins: a company's report page as its managers see it, read-only (no settings, no
    year close, no downloads, which would file a period) and hidden as the company's filing hides
    it: no names, and no figure its filing does not state (issue 47, item 4)."""
    company_name = queries.company_name(portal_context().db, company_id=company_id)
    if company_name is None:
        abort(404)
    return _report_page(company_id, company_name, read_only=True)


def _report_page(company_id: int, company_name: str, *, read_only: bool = False):
    tz = report_timezone(portal_context().settings)
    today = today_in(tz)

    def choose_query(settings) -> ReportQuery | QueryErrors:
        fiscal = settings.fiscal_year_start_month
        if not read_only:
            return parse_report_query(request.args, today, fiscal)
        # TEEI's view is a filing's: all programmes, over a whole month, quarter or year that has ended
        # (two views of other periods would differ by what no filing states); the latest one at first.
        args = {**request.args, "programme": "all"}
        if not args.get("from") and not args.get("to"):
            latest = next((p for p in presets(today, fiscal) if filing_period(p, today, fiscal)), None)
            args.update(latest.query if latest else {})
        query = parse_report_query(args, today, fiscal)
        if isinstance(query, ReportQuery) and not filing_period(query.period, today, fiscal):
            return QueryErrors([_(READ_ONLY_PERIODS)], query.args)
        return query

    settings, query, report, start = read_report_page(
        portal_context().db,
        company_id=company_id,
        company_name=company_name,
        tz=tz,
        choose_query=choose_query,
        as_filed=read_only,
    )
    scope = {"company_id": company_id} if read_only else {}
    here = {"report_endpoint": "reports.company_report" if read_only else "reports.index", "report_scope": scope}
    if isinstance(query, QueryErrors):
        return _error_page(query, today, settings, start, company_name=company_name, read_only=read_only, **here)
    listed = report.figures.volunteers
    shown = listed if request.args.get("volunteers") == "all" else listed[:PAGE_VOLUNTEERS]
    offered = _since_start(presets(today, settings.fiscal_year_start_month), start.started_on)
    fiscal = settings.fiscal_year_start_month
    filed_as = query.programme == "all" and filing_period(query.period, today, fiscal)
    files = bool(filed_as) and not read_only
    # A filed period: the page states the filing's ID, the one on its every PDF and report email.
    filing = filing_for(portal_context().db, company_id=company_id, period=filed_as) if filed_as else None
    language = current_language()
    # What the page hides: the filing's mask in the read-only view, nothing for the company's managers.
    view = masked_view(report)
    return render_template(
        "reports/index.html",
        report=report,
        view=view,
        errors=[],
        values=query.args,
        programmes=PROGRAMMES,
        shown=[] if read_only else shown,
        start=start,
        presets=offered,
        filing_presets=[p for p in offered if filing_period(p, today, fiscal)],
        files=files,
        filing=filing,
        settings=settings,
        # A chart's labels and lengths would tell a hidden figure: with one hidden, the tables only.
        month_svg=None if view.any_hidden() else charts.svg(charts.month_chart(report.figures, language=language)),
        programme_svg=None
        if view.any_hidden()
        else charts.svg(charts.programme_chart(report.figures, language=language)),
        method=method(language),
        benchmark=_(BENCHMARK),
        # TEEI's view words it as the filing does: the number of own-time volunteers is a group too.
        counted_time=counted_time_text(report.figures, language, masked=read_only, count_hidden=view.count_hidden()),
        # The company's managers see the working copy, nothing hidden; TEEI's read-only view hides what
        # the company's filing hides (its comparison too: the filing's own, or none before it is filed).
        comparison=view.comparison(language),
        crosswalk=crosswalk(
            report, language=language, hide_total=view.total_hidden(), hide_volunteers=view.count_hidden()
        ),
        departments=[]
        if read_only
        else queries.hours_by_department(portal_context().db, company_id=company_id, volunteers=listed),
        links=FigureLinks(query, opens=not read_only),
        company_name=company_name,
        read_only=read_only,
        **here,
    )


def _goal_years(today: date, fiscal_start_month: int) -> list:
    """The report years whose goals a manager sets: this one and the next (an ended year's filings
    state the goals they printed)."""
    current = fiscal_year_containing(today, fiscal_start_month)
    return [current, fiscal_year_containing(add_months(current.start, 12), fiscal_start_month)]


DRILL_PER_PAGE = 100


@bp.get("/reports/sessions")
@roles_required("manager")
def sessions():
    """The session records one figure of the report counts (its link on the report page), a page
    at a time, with what they add up to; the same list as CSV at /reports/sessions.csv."""
    tz, company_id, settings, today = _scope()
    drill = parse_drill(request.args, today, settings.fiscal_year_start_month)
    if isinstance(drill, QueryErrors):
        start = queries.company_start(portal_context().db, company_id=company_id, tz=tz)
        return _error_page(drill, today, settings, start)
    found = queries.drill_list(
        portal_context().db,
        company_id=company_id,
        drill=drill,
        tz=tz,
        number=page_number(request.args.get("page")),
        per_page=DRILL_PER_PAGE,
    )
    person = None
    if drill.volunteer is not None:
        person = queries.volunteer_sessions(portal_context().db, company_id=company_id, user_id=drill.volunteer)
    return render_template(
        "reports/sessions.html",
        drill=drill,
        found=found,
        person=person[0] if person else None,
        tz=tz,
        programmes=PROGRAMMES,
    )


@bp.get("/reports/sessions.csv")
@roles_required("manager")
def sessions_csv():
    """A figure's session records as CSV, streamed: one machine format in every language."""
    tz, company_id, settings, today = _scope()
    drill = parse_drill(request.args, today, settings.fiscal_year_start_month)
    if isinstance(drill, QueryErrors):
        start = queries.company_start(portal_context().db, company_id=company_id, tz=tz)
        return _error_page(drill, today, settings, start)
    period = drill.query.period
    narrowed = f"-volunteer-{drill.volunteer}" if drill.volunteer is not None else ""
    if drill.department is not None:
        narrowed = "-department"
    name = f"teei-sessions-{period.start}-{period.end}-{drill.query.programme}{narrowed}.csv"
    lines = exports.drill_csv_lines(
        queries.iter_drill(portal_context().db, company_id=company_id, drill=drill, tz=tz), tz
    )
    headers = {"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "private, no-store"}
    return Response(lines, mimetype=MIMETYPES["csv"], headers=headers)


@bp.get("/reports/settings")
@roles_required("manager")
def settings_page():
    return _settings_page()


def _settings_page(form: ReportSettingsForm | None = None, goals_form: GoalsForm | None = None):
    """The settings page; a refused form (either of its two) comes back with what was typed, each
    message next to its field, and a 400."""
    tz, company_id, settings, today = _scope()
    db = portal_context().db
    start = queries.company_start(db, company_id=company_id, tz=tz)
    closed = {c.period_start: c for c in queries.closures(db, company_id=company_id)}
    years = _since_start(closable_years(today, settings.fiscal_year_start_month), start.started_on)
    if form is None:
        form = ReportSettingsForm.of(settings, months=month_names(current_language()))
    goal_years = _goal_years(today, settings.fiscal_year_start_month)
    goals = queries.goals_of(db, company_id=company_id, years=goal_years)
    if goals_form is None:
        goals_form = GoalsForm(
            year_start=goal_years[0].start.isoformat(),
            goal_hours=goals[0].hours or "",
            goal_participation=goals[0].participation or "",
        )
    goals_form.year_start.choices = [(y.start.isoformat(), period_label(y, current_language())) for y in goal_years]
    return render_template(
        "reports/settings.html",
        form=form,
        start=start,
        years=[(p, closed.get(p.start.isoformat())) for p in years],
        goals_form=goals_form,
        goals=list(zip(goal_years, goals, strict=True)),
    ), (400 if form.errors or goals_form.errors else 200)


@bp.post("/reports/goals")
@roles_required("manager")
def save_goals():
    """A report year's goals. Bad input shows the page again with the error at its field, and saves nothing."""
    _tz, company_id, settings, today = _scope()
    goal_years = _goal_years(today, settings.fiscal_year_start_month)
    form = GoalsForm()
    form.year_start.choices = [(y.start.isoformat(), y.label) for y in goal_years]
    if not form.validate_on_submit():
        return _settings_page(goals_form=form)
    operations.save_goal(portal_context().db, company_id=company_id, actor_id=current_user.id, goal=form.goal())
    year = next(y for y in goal_years if y.start.isoformat() == form.year_start.data)
    flash(_("Goals for %(year)s saved.", year=period_label(year, current_language())), "success")
    return redirect(url_for("reports.settings_page") + "#goals")


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
        filed = _filed_report(db, company_id, query, tz, today, settings)
        if not isinstance(filed, FiledCopy):
            return filed  # not a filing period: the page with the reason
        body = pdf.filing_pdf(filed.report, current_language(), verify_url=filed.verify_url)
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


class FiledCopy(NamedTuple):
    report: Report  # the filed figures, mask, report ID and "as of"
    verify_url: str


def _filed_report(db, company_id: int, query: ReportQuery, tz, today: date, settings):
    """The query's filing as every copy of it states it (the PDF, the filing pack): filed now if this
    is its first copy, else as first filed; with its verify URL. Not a filing period: the 400 page."""
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
        comparison=filed.comparison,
    )
    return FiledCopy(report, verify_url(portal_context().settings.public_base_url, filed.report_id))


@bp.get("/reports/filing.<any(json, csv):fmt>")
@roles_required("manager")
def filing_pack(fmt: str):
    """The filing pack: the same filing as the filing PDF (same query, same rules, same report ID),
    as data points in JSON (streamed) or CSV. docs/filing-pack.md."""
    tz, company_id, settings, today = _scope()
    query = _parse(today, settings)
    db = portal_context().db
    if isinstance(query, QueryErrors):
        return _error_page(query, today, settings, queries.company_start(db, company_id=company_id, tz=tz))
    filed = _filed_report(db, company_id, query, tz, today, settings)
    if not isinstance(filed, FiledCopy):
        return filed
    report, url = filed
    name = f"teei-filing-{report.report_id}.{fmt}"
    headers = {"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "private, no-store"}
    if fmt == "json":
        return Response(pack.json_chunks(report, url), mimetype="application/json", headers=headers)
    return Response(pack.csv_lines(report), mimetype=MIMETYPES["csv"], headers=headers)


@bp.post("/reports/settings")
@roles_required("manager")
def save_settings():
    form = ReportSettingsForm(months=month_names(current_language()))
    if not form.validate_on_submit():
        return _settings_page(form)  # 400: what was typed stays, each message next to its field
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
    totals as filed, hidden exactly as its filing hides them; or, for a certificate's ID, what that
    certificate states (reports/certificate.py). An unknown ID is a plain 404 page."""
    wanted = report_id.strip().upper()
    if CERTIFICATE_ID_FORM.match(wanted):
        issued = queries.certificate_by_id(portal_context().db, certificate_id=wanted)
        if issued is None:
            return render_template("reports/verify_unknown.html", report_id=report_id[:80], certificate=True), 404
        return render_template("reports/verify_certificate.html", certificate=issued, programmes=PROGRAMMES)
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
    # From the report, the link carries its period (and programme): the page shows that period's
    # sessions and says which it is. Without one (an old link), every session, and it says so too.
    query = None
    if request.args.get("from") or request.args.get("to"):
        settings = queries.report_settings(portal_context().db, company_id=current_company_id())
        query = parse_report_query(request.args, today_in(tz), settings.fiscal_year_start_month)
        if isinstance(query, QueryErrors):
            abort(400)
        low, high = query.period.utc_bounds(tz)
        sessions = [s for s in sessions if low <= s.held_at < high and s.platform in query.programmes]
    language = current_language()
    return render_template(
        "reports/volunteer.html",
        person=person,
        sessions=sessions,
        tz=tz,
        programmes=PROGRAMMES,
        query=query,
        period_name=period_label(query.period, language) if query else "",
        period_dates=describe_in(query.period.start, query.period.end, language) if query else "",
        programme_name=query.programme_label_in(language) if query else "",
    )


@bp.get("/company")
@roles_required("manager")
def old_overview():
    return redirect(url_for("reports.index"), 301)


@bp.get("/company/employees/<int:user_id>")
@roles_required("manager")
def old_employee(user_id: int):
    return redirect(url_for("reports.volunteer", user_id=user_id), 301)


@bp.post("/me/hours/own-time")
@roles_required("employee")
def own_time():
    """The volunteer's choice whether their own-time hours count in their employer's report."""
    form = OwnTimeForm()
    if not form.validate_on_submit():
        flash(_("Choose whether your own-time hours count."), "error")
        return redirect(url_for("reports.my_hours") + "#own-time")
    counted = form.count_own_time.data == "yes"
    operations.choose_own_time(portal_context().db, user_id=current_user.id, counted=counted, now=now_iso())
    if counted:
        flash(_("Your own-time hours now count in your employer's report."), "success")
    else:
        flash(_("Your own-time hours no longer count in your employer's report."), "success")
    return redirect(url_for("reports.my_hours") + "#own-time")


@bp.get("/me/hours")
@roles_required("employee")
def my_hours():
    tz = report_timezone(portal_context().settings)
    choice = queries.own_time_choice(portal_context().db, user_id=current_user.id)
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
        choice=choice,
        own_time_form=OwnTimeForm(count_own_time="yes" if choice.counted else "no"),
        own_minutes=sum(s.minutes for s in counted if s.own_time),
    )


@bp.get("/me/hours/certificate")
@roles_required("employee")
def certificate_form():
    """The certificate's period, this year so far unless the volunteer chooses another."""
    form = CertificateForm(formdata=None)
    form.fill_this_year(today_in(report_timezone(portal_context().settings)))
    return render_template("reports/certificate.html", form=form)


@bp.get("/me/hours/certificate.pdf")
@roles_required("employee")
def certificate():
    """The certificate of the chosen period (`from`, `to`; none: this year so far), or the form again
    with what is wrong. The same statement asked for again is the same certificate, with its ID."""
    tz = report_timezone(portal_context().settings)
    today = today_in(tz)
    form = CertificateForm(request.args)
    if not request.args:
        form.fill_this_year(today)
    period = form.period(today) if form.validate() else None
    issued = None
    if period is not None:
        issued = operations.issue_certificate(
            portal_context().db,
            user_id=current_user.id,
            name=current_user.name or current_user.email,
            company_name=current_user.company_name or "",
            period=period,
            tz=tz,
            today=today,
            now=now_iso(),
        )
        if issued is None:
            language = current_language()
            form.form_errors.append(
                _(
                    "You attended no sessions between %(first)s and %(last)s, so there are no hours to certify. "
                    "Choose a period that includes your sessions.",
                    first=day(period.start, language),
                    last=day(period.end, language),
                )
            )
    if issued is None:
        return render_template("reports/certificate.html", form=form), 400
    body = certificates.certificate_pdf(
        issued,
        current_language(),
        verify_url=verify_url(portal_context().settings.public_base_url, issued.certificate_id),
    )
    return Response(
        body,
        mimetype="application/pdf",
        headers={
            "Content-Disposition": f'attachment; filename="teei-certificate-{period.start}-{period.end}.pdf"',
            "Cache-Control": "private, no-store",
        },
    )
