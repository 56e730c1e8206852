from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from portal.invitations import InvitationError, invite_manager
from portal.people import operations, queries
from portal.people.forms import ConfirmForm
from portal.web.access import current_company_id, roles_required
from portal.web.extensions import portal_context
from portal.web.forms import InviteManagerForm
from portal.web.paging import page_number, search_text

bp = Blueprint("people", __name__, url_prefix="/people")


@bp.get("")
@roles_required("manager")
def index():
    query = search_text(request.args.get("q"))
    typed_state = request.args.get("state") or ""
    state = typed_state if typed_state in queries.PERSON_STATES else "active"
    # An unknown state is said, not silently read as the default (issue 26, item 1).
    state_error = "Choose one of the options offered." if typed_state and typed_state != state else None
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
            flash(str(error), "error")
        else:
            flash(f"{person.display_name} is deactivated. Their hours until today stay in your report.", "success")
        return redirect(url_for("people.index"))
    return render_template("people/deactivate.html", person=person, form=form)


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
                inviter_id=current_user.id,
                inviter_name=current_user.name or "A colleague",
            )
        except InvitationError as error:
            form.email.errors.append(str(error))
        else:
            flash("The invitation to manage with you is on its way.", "success")
            return redirect(url_for("invitations.index"))
    return render_template("people/new_manager.html", form=form), 200 if request.method == "GET" else 400
