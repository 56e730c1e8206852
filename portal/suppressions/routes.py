from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal.core import clock
from portal.core.i18n import N_
from portal.core.text import normalise_email
from portal.outbox.operate import operator
from portal.suppressions.forms import AddSuppressionForm, RemoveSuppressionForm, SearchForm
from portal.web.access import roles_required
from portal.web.extensions import portal_context
from portal.web.forms import error_message
from portal.web.paging import Page, limits, page_number

bp = Blueprint("suppressions", __name__, url_prefix="/admin/suppressions")

# The engine's refusals (portal/outbox/hear/suppressions.py, in English), marked here where a page shows
# them: error_message looks each up in the catalogue.
ENGINE_REFUSALS = (
    N_("That address is already on the suppression list."),
    N_("That address is not on the suppression list."),
    N_("Enter a valid email address."),
    N_("Give a reason; it is kept with the change."),
)
NOT_ON_THE_LIST = ENGINE_REFUSALS[1]


def _render_index(add_form: AddSuppressionForm, status: int = 200):
    search = SearchForm(request.args)
    query = search.q.data if search.validate() else ""
    number = page_number(request.args.get("page"))
    rows, total = operator.list_suppressions(portal_context().db, query, **limits(number))
    return render_template(
        "suppressions/index.html",
        search=search,
        query=query,
        rows=rows,
        page=Page(items=rows, total=total, number=number),
        add_form=add_form,
        recent=operator.suppression_history(portal_context().db),
    ), status


@bp.get("/")
@roles_required("admin")
def index():
    return _render_index(AddSuppressionForm(formdata=None))


@bp.post("/")
@roles_required("admin")
def add():
    form = AddSuppressionForm()
    if form.validate_on_submit():
        try:
            operator.add_suppression(
                portal_context().db,
                email=form.email.data,
                reason=form.reason.data,
                actor_user_id=current_user.id,
                now=clock.utcnow(),
            )
        except operator.SuppressionError as error:
            form.email.errors.append(error_message(error))
        else:
            flash(_("%(address)s will not be emailed.", address=normalise_email(form.email.data)), "success")
            return redirect(url_for("suppressions.index"))
    return _render_index(form, status=400)


# Removal is two POSTs (the list's Remove button, then the confirmation with a reason), so the
# address never travels in a URL that an access log, the history or a Referer would keep.
@bp.post("/remove/confirm")
@roles_required("admin")
def confirm_remove():
    email = normalise_email(request.form.get("email", ""))
    if not operator.is_suppressed(portal_context().db, email):
        flash(_(NOT_ON_THE_LIST), "warning")
        return redirect(url_for("suppressions.index"))
    return _render_remove(RemoveSuppressionForm(formdata=None, data={"email": email}), email, status=200)


@bp.post("/remove")
@roles_required("admin")
def remove():
    form = RemoveSuppressionForm()
    if form.validate_on_submit():
        try:
            operator.remove_suppression(
                portal_context().db,
                email=form.email.data,
                reason=form.reason.data,
                actor_user_id=current_user.id,
                now=clock.utcnow(),
            )
        except operator.SuppressionError as error:
            form.form_errors.append(error_message(error))
        else:
            flash(_("%(address)s may be emailed again.", address=normalise_email(form.email.data)), "success")
            return redirect(url_for("suppressions.index"))
    return _render_remove(form, normalise_email(form.email.data or ""), status=400)


def _render_remove(form: RemoveSuppressionForm, email: str, *, status: int):
    return render_template(
        "suppressions/remove.html",
        form=form,
        email=email,
        events=operator.suppression_history(portal_context().db, email) if email else [],
    ), status
