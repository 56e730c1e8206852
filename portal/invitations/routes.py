import json

from flask import Blueprint, abort, flash, redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from flask_login import current_user

from portal.auth import load_user
from portal.core import clock
from portal.core.programmes import PROGRAMMES
from portal.invitations import managers, operations, queries, tokens
from portal.invitations.addresses import MAX_ADDRESSES
from portal.invitations.colleagues_csv import UnreadableFile, colleague_problem, normalised_address, read_colleagues
from portal.invitations.display import invitation_view
from portal.invitations.forms import AcceptForm, ConfirmImportForm, ImportForm, InviteForm
from portal.web.access import current_company_id, public, roles_required
from portal.web.extensions import portal_context
from portal.web.forms import CHOOSE_OFFERED, ContractConfirmedForm, error_message, takes_a_file
from portal.web.i18n import current_language
from portal.web.paging import page_number, search_text
from portal.web.sessions import start_session

bp = Blueprint("invitations", __name__, url_prefix="/invitations")
MAX_IMPORT_BYTES = 512 * 1024


@bp.get("")
@roles_required("manager")
def index():
    query = search_text(request.args.get("q"))
    typed_state = request.args.get("state") or ""
    state = typed_state if typed_state in queries.INVITATION_STATES else ""
    # An unknown state is said, not silently read as the default (issue 26, item 1).
    state_error = _(CHOOSE_OFFERED) if typed_state and typed_state != state else None
    page = queries.invitation_page(
        portal_context().db,
        company_id=current_company_id(),
        query=query,
        state=state,
        number=page_number(request.args.get("page")),
    )
    return render_template(
        "invitations/index.html",
        invitations=[invitation_view(row) for row in page.items],
        page=page,
        query=query,
        state=state,
        state_error=state_error,
        states=queries.INVITATION_STATES,
    ), (400 if state_error else 200)


@bp.route("/import", methods=["GET", "POST"])
@roles_required("manager")
@takes_a_file
def import_colleagues():
    """A CSV file of colleagues (name, email, department): first what the import will do, then,
    confirmed, the invitations (the same as the Invite page's, with each colleague's department)."""
    form = ImportForm()
    if form.validate_on_submit():
        try:
            read = read_colleagues(form.file.data.read(MAX_IMPORT_BYTES + 1)[:MAX_IMPORT_BYTES], limit=MAX_ADDRESSES)
        except UnreadableFile as error:
            form.file.errors.append(_(error.message, num=MAX_ADDRESSES))
        else:
            members, live = operations.standing_of(
                portal_context().db,
                company_id=current_company_id(),
                addresses=[c.email for c in read.colleagues],
                now=clock.utcnow(),
            )
            confirm = ConfirmImportForm(
                formdata=None,
                colleagues=json.dumps(
                    [[c.name, c.email, c.department] for c in read.colleagues if c.email not in members | live]
                ),
                programme=form.programme.data,
                language=form.language.data,
            )
            return render_template(
                "invitations/import_preview.html",
                read=read,
                members=members,
                live=live,
                confirm=confirm,
                to_invite=sum(1 for c in read.colleagues if c.email not in members | live),
                programme=PROGRAMMES[form.programme.data],
            )
    status = 200 if request.method == "GET" else 400
    return render_template("invitations/import.html", form=form, max_addresses=MAX_ADDRESSES), status


@bp.post("/import/confirm")
@roles_required("manager")
def confirm_import():
    form = ConfirmImportForm()
    colleagues = _confirmed_colleagues(form.colleagues.data) if form.validate_on_submit() else None
    if not colleagues:
        flash(_("Nothing was sent: the import was out of date or empty. Choose the file again."), "error")
        return redirect(url_for("invitations.import_colleagues"))
    result = operations.invite_colleagues(
        portal_context(),
        manager=current_user,
        addresses=[email for _name, email, _department in colleagues],
        programme=form.programme.data,
        names={email: name for name, email, _department in colleagues if name},
        departments={email: department for _name, email, department in colleagues if department},
        language=form.language.data,
    )
    _flash_invite_result(result)
    return redirect(url_for("invitations.index"))


def _confirmed_colleagues(raw: str) -> list[tuple[str, str, str]] | None:
    """The preview's colleagues, checked again as the file's lines were (the page could be changed)."""
    try:
        rows = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(rows, list) or not 0 < len(rows) <= MAX_ADDRESSES:
        return None
    colleagues = []
    for row in rows:
        if not (isinstance(row, list) and len(row) == 3 and all(isinstance(part, str) for part in row)):
            return None
        if colleague_problem(*row):
            return None
        colleagues.append((row[0], normalised_address(row[1]), row[2]))
    return colleagues


@bp.route("/new", methods=["GET", "POST"])
@roles_required("manager")
def new():
    form = InviteForm()
    if form.validate_on_submit():
        result = operations.invite_colleagues(
            portal_context(),
            manager=current_user,
            addresses=form.parsed.valid,
            programme=form.programme.data,
            names=form.parsed.names,
            language=form.language.data,
        )
        _flash_invite_result(result)
        return redirect(url_for("invitations.index"))
    status = 400 if form.is_submitted() else 200  # refused: what was typed stays, each error at its field
    return render_template("invitations/new.html", form=form, max_addresses=MAX_ADDRESSES), status


def _flash_invite_result(result: operations.InviteResult) -> None:
    if result.invited:
        count = len(result.invited)
        if result.queued:
            said = ngettext(
                "Invited %(num)d colleague. The emails are on their way.",
                "Invited %(num)d colleagues. The emails are on their way.",
                count,
            )
        else:
            said = ngettext(
                "Invited %(num)d colleague. The emails will go out in a minute.",
                "Invited %(num)d colleagues. The emails will go out in a minute.",
                count,
            )
        flash(said, "success")
    if result.already_invited:
        addresses = ", ".join(result.already_invited)
        flash(_("Already invited, so nothing new was sent: %(addresses)s", addresses=addresses), "info")
    if result.already_members:
        flash(_("Already have an account: %(addresses)s", addresses=", ".join(result.already_members)), "info")


@bp.post("/<int:invitation_id>/resend")
@roles_required("manager")
def resend(invitation_id: int):
    try:
        if request.form.get("role") == "manager":
            managers.resend_manager_invitation(
                portal_context(),
                company_id=current_company_id(),
                invitation_id=invitation_id,
                inviter_id=current_user.id,
                inviter_name=current_user.name or "A colleague",  # the email words it in its language
                language=current_language(),
            )
        else:
            operations.resend_invitation(
                portal_context(), manager=current_user, invitation_id=invitation_id, language=current_language()
            )
        flash(_("The invitation is being sent again."), "success")
    except operations.InvitationError as error:
        flash(error_message(error), "error")
    return redirect(url_for("invitations.index"))


@bp.route("/<int:invitation_id>/revoke", methods=["GET", "POST"])
@roles_required("manager")
def revoke(invitation_id: int):
    """Revoke an open invitation. The list links here: this page says what revoking does, and its
    "Yes" revokes. A script's POST without `confirmed` revokes too (CONTRACT.md)."""
    form = ContractConfirmedForm()
    if request.method == "GET" or not form.validate_on_submit() or not form.is_confirmed:
        invitation = queries.find_invitation(
            portal_context().db, company_id=current_company_id(), invitation_id=invitation_id
        )
        if invitation is None:
            abort(404)  # another company's invitation looks exactly like a missing one
        shown = invitation_view(invitation)
        if not shown.can_revoke:
            return redirect(url_for("invitations.index"))
        return render_template("invitations/confirm_revoke.html", invitation=shown)
    try:
        email = operations.revoke_invitation(
            portal_context().db, company_id=current_company_id(), invitation_id=invitation_id
        )
        flash(_("The invitation to %(email)s is revoked: its link no longer works.", email=email), "success")
    except operations.InvitationError as error:
        flash(error_message(error), "error")
    return redirect(url_for("invitations.index"))


# The link's token is exchanged for session state on the first GET and the browser is sent to a
# clean URL, so the token is not in the address bar, the history, a Referer or any later request
# line (the first request line is redacted by portal/web/access_log.py). The session, a signed but
# readable cookie, keeps only the token's hash: the server's reference to the invitation.
_LINK_KEY = "invitation_link"


@bp.get("/accept/<token>")
@public
def open_link(token: str):
    invitation, problem = queries.find_open_invitation(portal_context().db, tokens.token_hash(token))
    if invitation is None:
        return _unavailable(problem)
    session[_LINK_KEY] = tokens.token_hash(token)
    return redirect(url_for("invitations.accept"), code=303)


@bp.route("/accept", methods=["GET", "POST"])
@bp.post("/accept/<token>", endpoint="accept_with_token")  # the contract's POST with the token in the path
@public
def accept(token: str | None = None):
    token_hash = tokens.token_hash(token) if token else session.get(_LINK_KEY)
    if not token_hash:
        return _unavailable("unknown")
    db = portal_context().db
    invitation, problem = queries.find_open_invitation(db, token_hash)
    if invitation is None:
        session.pop(_LINK_KEY, None)
        return _unavailable(problem)
    form = AcceptForm()
    if request.method == "GET" and invitation.name:
        form.name.data = invitation.name
    if form.validate_on_submit():
        try:
            user_id = operations.accept_invitation(
                db, token_hash=token_hash, name=form.name.data, password=form.password.data
            )
        except operations.InvitationError as error:
            form.form_errors.append(error_message(error))
        else:
            start_session(load_user(db, user_id))
            flash(
                _(
                    "Welcome! You are signed in to the TEEI Partner Portal with %(company)s.",
                    company=invitation.company_name,
                ),
                "success",
            )
            return redirect(url_for("main.home"))
    status = 400 if form.is_submitted() else 200  # refused: nothing created, the errors at their fields
    return render_template("invitations/accept.html", form=form, invitation=invitation), status


def _unavailable(problem: str):
    status = 404 if problem == "unknown" else 410
    return render_template("invitations/unavailable.html", problem=problem), status
