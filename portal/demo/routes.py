from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal.core.db import AmbiguousCommitError, DatabaseBusyError
from portal.core.i18n import N_
from portal.demo import operations, queries
from portal.demo.forms import DemoRequestForm, FollowUpForm
from portal.web.access import public, roles_required
from portal.web.extensions import portal_context
from portal.web.i18n import current_language
from portal.web.public_forms import accept_public_form, public_form_limits

bp = Blueprint("demo", __name__)

UNCONFIRMED = N_(
    "We could not confirm your request was saved. Please wait a minute and send it again: "
    "if it did arrive, we will not record it twice."
)
# Whole sentences per status, so each language words them its own way.
SAVED = {
    "new": N_("Saved: the request from %(name)s is new."),
    "contacted": N_("Saved: the request from %(name)s is contacted."),
    "done": N_("Saved: the request from %(name)s is done."),
}
assert set(SAVED) == set(operations.STATUS_LABELS)


def _said(error: operations.DemoRequestError) -> str:
    """An operation's refusal in the page's language (marked where it is raised); else as it is."""
    if not hasattr(error, "message"):
        return str(error)
    return _(error.message, **error.values)


@bp.route("/demo", methods=["GET", "POST"])
@public_form_limits("demo")
@public
def request_demo():
    form = DemoRequestForm()

    def submit():
        operations.request_demo(
            portal_context(),
            name=form.name.data,
            email=form.email.data,
            company=form.company.data,
            message=form.message.data,
            language=current_language(),
        )

    if accept_public_form(form, submit, unconfirmed=_(UNCONFIRMED)):
        return redirect(url_for(".thanks"))
    return render_template("demo/request.html", form=form), 200 if request.method == "GET" else 400


@bp.get("/demo/thanks")
@public
def thanks():
    return render_template("demo/thanks.html")


@bp.route("/admin/demo-requests/<int:submission_id>", methods=["GET", "POST"])
@roles_required("admin")
def admin_detail(submission_id: int):
    db = portal_context().db
    found = queries.demo_request(db, submission_id)
    if found is None:
        abort(404)
    form = FollowUpForm(data={"status": found.status, "note": found.note})
    if form.validate_on_submit():
        try:
            operations.follow_up(
                db, submission_id=submission_id, status=form.status.data, note=form.note.data, admin_id=current_user.id
            )
        except DatabaseBusyError:
            form.form_errors.append(_("The database was busy, so nothing was saved. Please try again."))
        except AmbiguousCommitError:
            flash(_("We could not confirm this was saved; check the request before saving again."), "warning")
            return redirect(url_for(".admin_detail", submission_id=submission_id))
        except operations.DemoRequestError as error:
            form.note.errors.append(_said(error))
        else:
            flash(_(SAVED[form.status.data], name=found.name), "success")
            return redirect(url_for(".admin_detail", submission_id=submission_id))
    status = 200 if request.method == "GET" else 400
    return render_template("demo/admin_detail.html", request_row=found, form=form), status
