from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal.invitations import InvitationError, invite_manager
from portal.people import operations, queries
from portal.people.forms import ConfirmForm
from portal.web.access import current_company_id, roles_required
from portal.web.extensions import portal_context
from portal.web.forms import CHOOSE_OFFERED, ConfirmedForm, InviteManagerForm, error_message
from portal.web.paging import page_number, search_text

bp = Blueprint("people", __name__, url_prefix="/people")


@bp.get("")
@roles_required("manager")
def index():
    query = search_text(request.args.get("q"))
    typed_state = request.args.get("state") or ""
    state = typed_state if typed_state in queries.PERSON_STATES else "active"
    # An unknown state is said, not silently read as the default (issue 26, item 1).
    state_error = _(CHOOSE_OFFERED) if typed_state and typed_state != state else None
    page = queries.people_page(
        portal_context().db,
        company_id=current_company_id(),
        query=query,
        state=state,
        number=page_number(request.args.get("page")),
    )
    return render_template("people/index.html", page=page, query=query, state=state, state_error=state_error), (
        400 if state_error else 200
    )


@bp.route("/<int:user_id>/deactivate", methods=["GET", "POST"])
@roles_required("manager")
def deactivate(user_id: int):
    person = queries.find_colleague(portal_context().db, company_id=current_company_id(), user_id=user_id)
    if person is None:
        abort(404)
    form = ConfirmForm()
    if form.validate_on_submit():
        try:
            operations.deactivate_colleague(
                portal_context().db, company_id=current_company_id(), user_id=user_id, acting_user_id=current_user.id
            )
        except operations.PeopleError as error:
            flash(error_message(error), "error")
        else:
            said = _("%(name)s is deactivated. Their hours until today stay in your report.", name=person.display_name)
            flash(said, "success")
        return redirect(url_for("people.index"))
    return render_template("people/deactivate.html", person=person, form=form)


@bp.route("/<int:user_id>/reactivate", methods=["GET", "POST"])
@roles_required("manager")
def reactivate(user_id: int):
    """A colleague who left is back: they can sign in again and belong to the company from now.
    The list links to this page; only its "Yes" (`confirmed=yes`) reactivates."""
    person = queries.find_colleague(portal_context().db, company_id=current_company_id(), user_id=user_id)
    if person is None:
        abort(404)
    form = ConfirmedForm()
    if request.method == "GET" or not form.validate_on_submit() or not form.is_confirmed:
        return render_template("people/confirm_reactivate.html", person=person)
    try:
        operations.reactivate_colleague(
            portal_context().db, company_id=current_company_id(), user_id=user_id, acting_user_id=current_user.id
        )
    except operations.PeopleError as error:
        flash(error_message(error), "error")
    else:
        flash(_("%(name)s is active again and can sign in.", name=person.display_name), "success")
    return redirect(url_for("people.index", state="deactivated"))


@bp.route("/<int:user_id>/make-manager", methods=["GET", "POST"])
@roles_required("manager")
def make_manager(user_id: int):
    """A volunteer becomes a manager of the company. The list links to this page; only its "Yes"
    (`confirmed=yes`) changes the role."""
    person = queries.find_colleague(portal_context().db, company_id=current_company_id(), user_id=user_id)
    if person is None:
        abort(404)
    form = ConfirmedForm()
    if request.method == "GET" or not form.validate_on_submit() or not form.is_confirmed:
        return render_template("people/confirm_make_manager.html", person=person)
    try:
        operations.make_manager(
            portal_context().db, company_id=current_company_id(), user_id=user_id, acting_user_id=current_user.id
        )
    except operations.PeopleError as error:
        flash(error_message(error), "error")
    else:
        flash(_("%(name)s is now a manager of your company.", name=person.display_name), "success")
    return redirect(url_for("people.index"))


@bp.route("/managers/new", methods=["GET", "POST"])
@roles_required("manager")
def new_manager():
    form = InviteManagerForm()
    if form.validate_on_submit():
        try:
            invite_manager(
                portal_context(),
                company_id=current_company_id(),
                email=form.email.data,
                name=form.name.data,
                inviter_id=current_user.id,
                inviter_name=current_user.name or "A colleague",  # the email words it in its language
                # for an address without an account: the email in the language chosen on the form
                language=form.language.data,
            )
        except InvitationError as error:
            form.email.errors.append(error_message(error))
        else:
            flash(_("The invitation to manage with you is on its way."), "success")
            return redirect(url_for("invitations.index"))
    return render_template("people/new_manager.html", form=form), 200 if request.method == "GET" else 400
