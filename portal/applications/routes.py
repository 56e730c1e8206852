from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal.applications import operations, queries
from portal.applications.forms import ApplicationForm, DecisionForm
from portal.applications.states import STATE_LABELS
from portal.core import clock
from portal.core.db import AmbiguousCommitError, DatabaseBusyError
from portal.core.i18n import N_
from portal.core.text import InputError
from portal.web.access import public, roles_required
from portal.web.extensions import portal_context
from portal.web.i18n import current_language
from portal.web.paging import page_number, search_text
from portal.web.public_forms import accept_public_form, public_form_limits

bp = Blueprint("applications", __name__)

UNCONFIRMED_APPLICATION = N_(
    "We could not confirm your application was saved. Please wait a minute and send it "
    "again: if it did arrive, we will not record it twice."
)
UNCONFIRMED_DECISION = N_("We could not confirm this was saved; check the application before retrying.")


def _said(error: Exception) -> str:
    """An operation's refusal in the page's language (marked where it is raised: `message`, `values`);
    a refusal inside it (an invitation's) too. Anything else as it is."""
    if not isinstance(error, InputError) or not hasattr(error, "message"):
        return str(error)
    values = {name: _said(value) if isinstance(value, Exception) else value for name, value in error.values.items()}
    return _(error.message, **values)


@bp.app_context_processor
def new_applications_for_admins():
    """The admin navigation shows how many applications wait for a decision, on every page."""
    if not (current_user.is_authenticated and current_user.role == "admin"):
        return {}
    try:
        return {"new_applications": queries.new_count(portal_context().db)}
    except Exception:
        # An error page rendered because the database is down must still render.
        return {}


@bp.route("/apply", methods=["GET", "POST"])
@public_form_limits("apply")
@public
def apply():
    form = ApplicationForm()

    def submit():
        operations.submit_application(
            portal_context(),
            company_name=form.company_name.data,
            contact_name=form.contact_name.data,
            contact_email=form.contact_email.data,
            employee_count=form.employee_count.data,
            message=form.message.data,
            language=current_language(),
            now=clock.utcnow(),
        )

    if accept_public_form(form, submit, unconfirmed=_(UNCONFIRMED_APPLICATION)):
        return redirect(url_for(".thanks"))
    return render_template("applications/apply.html", form=form), 200 if request.method == "GET" else 400


@bp.get("/apply/thanks")
@public
def thanks():
    return render_template("applications/thanks.html")


@bp.get("/admin/applications")
@roles_required("admin")
def admin_list():
    db = portal_context().db
    state = request.args.get("state", "new")
    state = state if state in STATE_LABELS or state == "all" else "new"
    query = search_text(request.args.get("q"))
    page = queries.application_page(
        db, state="" if state == "all" else state, query=query, number=page_number(request.args.get("page"))
    )
    return render_template(
        "applications/admin_list.html",
        page=page,
        counts=queries.state_counts(db),
        labels=STATE_LABELS,
        state=state,
        query=query,
    )


@bp.get("/admin/applications/<int:application_id>")
@roles_required("admin")
def admin_detail(application_id: int):
    return _render_detail(application_id, None)


@bp.post("/admin/applications/<int:application_id>/decision")
@roles_required("admin")
def decide(application_id: int):
    form = DecisionForm()
    if not form.validate_on_submit():
        return _render_detail(application_id, form, status=400)
    if form.needs_confirmation:
        detail = queries.get_application(portal_context().db, application_id)
        if detail is None:
            abort(404)
        return render_template(
            "applications/confirm_decision.html", detail=detail, application=detail.application, form=form
        )
    try:
        outcome = operations.record_decision(
            portal_context(),
            application_id=application_id,
            decision=form.decision.data,
            note=form.note.data,
            admin_user_id=current_user.id,
            decisions_seen=form.decisions_seen.data,
        )
    except operations.ApplicationNotFound:
        abort(404)
    except DatabaseBusyError:
        form.form_errors.append(_("The database was busy, so nothing was saved. Please try again."))
        return _render_detail(application_id, form, status=503)
    except AmbiguousCommitError:
        flash(_(UNCONFIRMED_DECISION), "warning")
        return redirect(url_for(".admin_detail", application_id=application_id))
    except operations.DecisionRefused as error:
        flash(_said(error), "error")
        return redirect(url_for(".admin_detail", application_id=application_id))
    except operations.ApplicationError as error:
        form.form_errors.append(_said(error))
        return _render_detail(application_id, form, status=400)
    flash(_decided_message(outcome), "success")
    return redirect(url_for(".admin_detail", application_id=application_id))


def _render_detail(application_id: int, form: DecisionForm | None, status: int = 200):
    detail = queries.get_application(portal_context().db, application_id)
    if detail is None:
        abort(404)
    if form is None:
        form = DecisionForm(data={"decisions_seen": detail.application.decision_count})
    return render_template(
        "applications/admin_detail.html", detail=detail, application=detail.application, form=form
    ), status


def _decided_message(outcome: operations.DecisionOutcome) -> str:
    names = {"company": outcome.company_name, "contact": outcome.contact_name}
    if outcome.decision == "approve":
        message = _("Approved. %(company)s is a partner now, and %(contact)s is invited as its first manager.", **names)
    elif outcome.decision == "decline":
        message = _("Declined. %(contact)s will get an email about it.", contact=outcome.contact_name)
    else:
        message = _("Asked %(contact)s for more information.", contact=outcome.contact_name)
    if not outcome.queued:
        message += " " + _("The email is saved and will go out within a few minutes.")
    return message
