import logging

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from portal.access import public, roles_required
from portal.applications import bp, service
from portal.applications.forms import ApplicationForm, DecisionForm
from portal.db import AmbiguousCommitError, DatabaseBusyError
from portal.extensions import limiter
from portal.services import get_db, get_redis, get_settings

log = logging.getLogger(__name__)

# Per client: five accepted applications an hour, and a ceiling on all attempts (typos included).
ACCEPTED_LIMIT = "5 per hour"
ATTEMPT_LIMIT = "30 per hour"
BUSY = "We are very busy right now and nothing was saved. Please send the form again in a moment."
UNCONFIRMED_APPLICATION = ("We could not confirm your application was saved. Please wait a minute and send it "
                           "again: if it did arrive, we will not record it twice.")
UNCONFIRMED_DECISION = "We could not confirm this was saved; check the application before retrying."


def _accepted(response) -> bool:
    return response.status_code == 302


@bp.route("/apply", methods=["GET", "POST"])
@limiter.limit(ACCEPTED_LIMIT, methods=["POST"], deduct_when=_accepted, scope="apply-accepted")
@limiter.limit(ATTEMPT_LIMIT, methods=["POST"], scope="apply-attempts")
@public
def apply():
    form = ApplicationForm()
    if form.is_submitted() and form.website.data:
        log.info("application form: honeypot filled in; answered as accepted, nothing written")
        return redirect(url_for(".thanks"))
    if form.validate_on_submit():
        try:
            service.submit_application(
                get_db(), get_redis(), get_settings(),
                company_name=form.company_name.data, contact_name=form.contact_name.data,
                contact_email=form.contact_email.data, employee_count=form.employee_count.data,
                message=form.message.data,
            )
        except DatabaseBusyError:
            form.form_errors.append(BUSY)
        except AmbiguousCommitError:
            form.form_errors.append(UNCONFIRMED_APPLICATION)
        except service.ApplicationError as error:
            form.form_errors.append(str(error))
        else:
            return redirect(url_for(".thanks"))
    return render_template("applications/apply.html", form=form), 200 if request.method == "GET" else 400


@bp.get("/apply/thanks")
@public
def thanks():
    return render_template("applications/thanks.html")


@bp.get("/admin/applications")
@roles_required("admin")
def admin_list():
    groups, counts = service.applications_by_state(get_db())
    return render_template("applications/admin_list.html", groups=groups, counts=counts,
                           labels=service.STATE_LABELS, limit=service.LIST_LIMIT)


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
    try:
        outcome = service.record_decision(
            get_db(), get_redis(), get_settings(), application_id=application_id, decision=form.decision.data,
            note=form.note.data, admin_user_id=current_user.id, decisions_seen=form.decisions_seen.data,
        )
    except service.ApplicationNotFound:
        abort(404)
    except DatabaseBusyError:
        form.form_errors.append("The database was busy, so nothing was saved. Please try again.")
        return _render_detail(application_id, form, status=503)
    except AmbiguousCommitError:
        flash(UNCONFIRMED_DECISION, "warning")
        return redirect(url_for(".admin_detail", application_id=application_id))
    except service.DecisionRefused as error:
        flash(str(error), "error")
        return redirect(url_for(".admin_detail", application_id=application_id))
    except service.ApplicationError as error:
        form.form_errors.append(str(error))
        return _render_detail(application_id, form, status=400)
    flash(_decided_message(outcome), "success")
    return redirect(url_for(".admin_detail", application_id=application_id))


def _render_detail(application_id: int, form: DecisionForm | None, status: int = 200):
    detail = service.get_application(get_db(), application_id)
    if detail is None:
        abort(404)
    if form is None:
        form = DecisionForm(data={"decisions_seen": detail.application.decision_count})
    return render_template("applications/admin_detail.html", detail=detail, application=detail.application,
                           form=form), status


def _decided_message(outcome: service.DecisionOutcome) -> str:
    message = {
        "approve": f"Approved. {outcome.company_name} is a partner now, and {outcome.contact_name} is invited "
                   "as its first manager.",
        "decline": f"Declined. {outcome.contact_name} will get an email about it.",
        "request_info": f"Asked {outcome.contact_name} for more information.",
    }[outcome.decision]
    if not outcome.queued:
        message += " The email is saved and will go out within a few minutes."
    return message
