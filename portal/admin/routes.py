from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal import invitations
from portal.admin import queries
from portal.applications import STATE_LABELS
from portal.core import clock
from portal.core.i18n import N_
from portal.core.periods import report_timezone
from portal.demo import STATUS_LABELS as DEMO_STATUS_LABELS
from portal.demo import demo_request_page, status_counts
from portal.people import people_page
from portal.web.access import roles_required
from portal.web.extensions import portal_context
from portal.web.forms import CHOOSE_OFFERED, InviteManagerForm
from portal.web.i18n import current_language
from portal.web.paging import page_number, search_text

bp = Blueprint("admin", __name__)
# Who invites a manager when an admin does: stored with the invitation email in English, marked so
# the email can show it in its own language.
PARTNERSHIPS_TEAM = N_("The TEEI partnerships team")


def _said(error: Exception) -> str:
    """A refusal in the page's language when it was marked where it was raised (`message`, `values`)."""
    if not hasattr(error, "message"):
        return str(error)
    return _(error.message, **getattr(error, "values", {}))


@bp.get("/")
@roles_required("admin")
def dashboard():
    query = search_text(request.args.get("q"))
    companies = queries.company_summaries(portal_context().db, query=query)
    return render_template("admin/dashboard.html", companies=companies, query=query)


# The overview's orders: each column a person may sort by, as (key, largest first); ties by name.
PARTNER_ORDERS = {
    "hours": (lambda row: row.minutes_this_year, True),
    "name": (lambda row: row.name.casefold(), False),
    "active": (lambda row: row.active_volunteers, True),
    "last_session": (lambda row: row.last_session_at or "", True),
}


@bp.get("/partners")
@roles_required("admin")
def partners():
    """Each partner company's hours this year and last year to the same date, active volunteers,
    last session and trend; from here TEEI reads a company's report, read-only."""
    typed = request.args.get("sort") or ""
    order = typed if typed in PARTNER_ORDERS else "hours"
    # An unknown order is said, not silently read as the default (as People's filter does).
    sort_error = _(CHOOSE_OFFERED) if typed and typed != order else None
    key, largest_first = PARTNER_ORDERS[order]
    overview = queries.partner_overview(
        portal_context().db, now=clock.utcnow(), tz=report_timezone(portal_context().settings)
    )
    return render_template(
        "admin/partners.html",
        overview=overview,
        rows=sorted(sorted(overview.rows, key=lambda row: row.name.casefold()), key=key, reverse=largest_first),
        order=order,
        active_days=queries.ACTIVE_DAYS,
        flat_percent=queries.FLAT_PERCENT,
        sort_error=sort_error,
    ), (400 if sort_error else 200)


@bp.get("/companies/<int:company_id>")
@roles_required("admin")
def company(company_id: int):
    return _render_company(company_id, InviteManagerForm(formdata=None))


def _render_company(company_id: int, form: InviteManagerForm, status: int = 200):
    db = portal_context().db
    found = queries.company(db, company_id)
    if found is None:
        abort(404)
    people = people_page(db, company_id=company_id, state="", number=page_number(request.args.get("people")))
    invited = invitations.invitation_page(
        db, company_id=company_id, number=page_number(request.args.get("invitations"))
    )
    return render_template(
        "admin/company.html",
        company=found,
        people=people,
        invitations=invited,
        invitation_views=[invitations.invitation_view(row) for row in invited.items],
        applications=queries.company_applications(db, found),
        state_labels=STATE_LABELS,
        form=form,
    ), status


@bp.post("/companies/<int:company_id>/managers")
@roles_required("admin")
def invite_manager(company_id: int):
    """An admin invites a manager: a company whose first manager never signed up is not locked out."""
    form = InviteManagerForm()
    if queries.company(portal_context().db, company_id) is None:
        abort(404)
    if form.validate_on_submit():
        try:
            invitations.invite_manager(
                portal_context(),
                company_id=company_id,
                email=form.email.data,
                name=form.name.data,
                inviter_id=current_user.id,
                inviter_name=PARTNERSHIPS_TEAM,
                language=form.language.data,
            )
        except invitations.InvitationError as error:
            form.email.errors.append(_said(error))
        else:
            flash(_("The manager invitation is on its way."), "success")
            return redirect(url_for("admin.company", company_id=company_id))
    return _render_company(company_id, form, status=400)


@bp.post("/companies/<int:company_id>/invitations/<int:invitation_id>/resend")
@roles_required("admin")
def resend_manager_invitation(company_id: int, invitation_id: int):
    try:
        invitations.resend_manager_invitation(
            portal_context(),
            company_id=company_id,
            invitation_id=invitation_id,
            inviter_id=current_user.id,
            inviter_name=PARTNERSHIPS_TEAM,
            language=current_language(),
        )
        flash(_("The manager invitation is being sent again, with a new link."), "success")
    except invitations.InvitationError as error:
        flash(_said(error), "error")
    return redirect(url_for("admin.company", company_id=company_id))


@bp.get("/demo-requests")
@roles_required("admin")
def demo_requests():
    db = portal_context().db
    query = search_text(request.args.get("q"))
    status = request.args.get("status", "")
    status = status if status in DEMO_STATUS_LABELS else ""
    page = demo_request_page(db, query=query, status=status, number=page_number(request.args.get("page")))
    return render_template(
        "admin/demo_requests.html",
        page=page,
        query=query,
        status=status,
        counts=status_counts(db),
        labels=DEMO_STATUS_LABELS,
    )
