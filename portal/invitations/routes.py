from flask import flash, redirect, render_template, url_for
from flask_login import current_user, login_user

from portal.access import current_company_id, public, roles_required
from portal.auth.service import load_user
from portal.invitations import bp, service
from portal.invitations.forms import AcceptForm, InviteForm
from portal.services import get_db, get_redis, get_settings


@bp.get("")
@roles_required("manager")
def index():
    invitations = service.list_invitations(get_db(), company_id=current_company_id())
    return render_template("invitations/index.html", invitations=invitations)


@bp.route("/new", methods=["GET", "POST"])
@roles_required("manager")
def new():
    form = InviteForm()
    if form.validate_on_submit():
        result = service.invite_colleagues(get_db(), get_redis(), get_settings(), manager=current_user,
                                           addresses=form.parsed.valid, programme=form.programme.data)
        _flash_invite_result(result)
        return redirect(url_for("invitations.index"))
    return render_template("invitations/new.html", form=form, max_addresses=service.MAX_ADDRESSES)


def _flash_invite_result(result: service.InviteResult) -> None:
    if result.invited:
        count = len(result.invited)
        flash(f"Invited {count} colleague{'s' if count != 1 else ''}. "
              + ("The emails are on their way." if result.queued else "The emails will go out in a minute."),
              "success")
    if result.already_invited:
        flash("Already invited, so nothing new was sent: " + ", ".join(result.already_invited), "info")
    if result.already_members:
        flash("Already have an account: " + ", ".join(result.already_members), "info")


@bp.post("/<int:invitation_id>/resend")
@roles_required("manager")
def resend(invitation_id: int):
    try:
        service.resend_invitation(get_db(), get_redis(), get_settings(), manager=current_user,
                                  invitation_id=invitation_id)
        flash("The invitation is being sent again.", "success")
    except service.InvitationError as error:
        flash(str(error), "error")
    return redirect(url_for("invitations.index"))


@bp.route("/accept/<token>", methods=["GET", "POST"])
@public
def accept(token: str):
    invitation, problem = service.find_open_invitation(get_db(), token)
    if invitation is None:
        return render_template("invitations/unavailable.html", problem=problem), 410 if problem != "unknown" else 404
    form = AcceptForm()
    if form.validate_on_submit():
        try:
            user_id = service.accept_invitation(get_db(), token=token, name=form.name.data,
                                                password=form.password.data)
        except service.InvitationError as error:
            form.form_errors.append(str(error))
        else:
            login_user(load_user(get_db(), user_id))
            flash(f"Welcome to {invitation.company_name}'s volunteering with TEEI.", "success")
            return redirect(url_for("main.home"))
    return render_template("invitations/accept.html", form=form, invitation=invitation)
