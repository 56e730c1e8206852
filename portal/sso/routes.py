"""Sign-in through a company's provider, the company's sign-in settings, and its identity events."""

from flask import Blueprint, abort, flash, redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal.auth import load_user
from portal.core import clock
from portal.core.programmes import PROGRAMMES
from portal.sso import operations, queries
from portal.sso.forms import ApproveForm, ProviderForm
from portal.sso.oidc import SCOPE, SignInRefused
from portal.sso.words import REASONS
from portal.web.access import current_company_id, public, roles_required
from portal.web.extensions import limiter, portal_context
from portal.web.forms import error_message
from portal.web.sessions import start_session

bp = Blueprint("sso", __name__)

_STATE_KEY = "sso_state"
SIGN_IN_LIMIT = "30 per 5 minutes"
# A refusal because the provider cannot be reached is the provider's failure, not the person's.
_PROVIDER_FAILURES = {"provider_unreachable", "token_refused"}


@bp.get("/login/sso")
@limiter.limit(SIGN_IN_LIMIT, scope="sso-sign-in")
@public
def start():
    """Send the browser to the provider that vouches for `domain` (the sign-in page sends people here)."""
    provider = queries.provider_for_domain(portal_context().db, (request.args.get("domain") or "").strip().lower())
    if provider is None:
        return _refused("not_configured")
    try:
        url, state = operations.start_sign_in(
            portal_context().db, portal_context().settings, provider, now=clock.utcnow()
        )
    except SignInRefused as refused:
        return _refused(refused.reason)
    session[_STATE_KEY] = state
    return redirect(url)


@bp.get(operations.CALLBACK_PATH)
@limiter.limit(SIGN_IN_LIMIT, scope="sso-sign-in")
@public
def callback():
    """The provider's answer. Every refusal is a page that says what happened; nobody is signed in by one."""
    try:
        user_id = operations.finish_sign_in(
            portal_context().db,
            portal_context().settings,
            state=request.args.get("state", ""),
            browser_state=session.pop(_STATE_KEY, None),
            code=request.args.get("code"),
            error=request.args.get("error"),
            now=clock.utcnow(),
        )
    except SignInRefused as refused:
        return _refused(refused.reason)
    user = load_user(portal_context().db, user_id)
    if user is None:
        return _refused("deactivated")
    start_session(user)
    return redirect(url_for("main.home"))


def _refused(reason: str):
    status = 502 if reason in _PROVIDER_FAILURES else 400 if reason != "not_configured" else 404
    return render_template("sso/refused.html", reason=_(REASONS[reason])), status


# --- the company's settings: its managers (saved for approval), TEEI's admins (in force at once) ---


@bp.route("/company/sign-in", methods=["GET", "POST"])
@roles_required("manager")
def settings():
    return _settings_page(current_company_id(), by_admin=False)


@bp.route("/admin/companies/<int:company_id>/sign-in", methods=["GET", "POST"])
@roles_required("admin")
def admin_settings(company_id: int):
    return _settings_page(company_id, by_admin=True)


@bp.post("/admin/companies/<int:company_id>/sign-in/approve")
@roles_required("admin")
def approve(company_id: int):
    if ApproveForm().validate_on_submit():
        approved = operations.approve_provider(
            portal_context().db, company_id=company_id, acting_user_id=current_user.id, now=clock.utcnow()
        )
        if approved:
            flash(
                _("The sign-in settings are approved: colleagues at these domains now sign in through the provider."),
                "success",
            )
        else:
            flash(_("There were no settings waiting for approval."), "info")
    return redirect(url_for("sso.admin_settings", company_id=company_id))


@bp.get("/company/sign-in/events")
@roles_required("manager")
def events():
    return _events_page(current_company_id(), by_admin=False)


@bp.get("/admin/companies/<int:company_id>/sign-in/events")
@roles_required("admin")
def admin_events(company_id: int):
    return _events_page(company_id, by_admin=True)


def _company_name(company_id: int) -> str:
    name = queries.company_name(portal_context().db, company_id)
    if name is None:
        abort(404)
    return name


def _settings_page(company_id: int, *, by_admin: bool):
    db, app_settings = portal_context().db, portal_context().settings
    provider = queries.company_provider(db, company_id)
    company_name = _company_name(company_id) if by_admin else current_user.company_name
    form = ProviderForm()
    if request.method == "GET" and provider is not None:
        form.issuer.data = provider.issuer
        form.client_id.data = provider.client_id
        form.domains.data = "\n".join(provider.domains)
        form.join.data = provider.join_programme or "invitation"
        form.password_sign_in.data = provider.password_sign_in
        form.directory_creates.data = provider.directory_creates
    if form.validate_on_submit():
        try:
            operations.save_provider(
                db,
                app_settings,
                company_id=company_id,
                issuer=form.issuer.data,
                client_id=form.client_id.data,
                client_secret=form.client_secret.data or None,
                domains=form.domains.data,
                join_programme=None if form.join.data == "invitation" else form.join.data,
                password_sign_in=form.password_sign_in.data,
                directory_creates=form.directory_creates.data,
                acting_user_id=current_user.id,
                approve=by_admin,
                now=clock.utcnow(),
            )
        except operations.SettingsError as error:
            form.form_errors.append(error_message(error))
        else:
            flash(
                _("Saved and in force.")
                if by_admin
                else _("Saved. TEEI's admins approve the settings before colleagues sign in through the provider."),
                "success",
            )
            endpoint = "sso.admin_settings" if by_admin else "sso.settings"
            return redirect(url_for(endpoint, **({"company_id": company_id} if by_admin else {})))
    page = render_template(
        "sso/settings.html",
        form=form,
        provider=provider,
        company_name=company_name,
        company_id=company_id,
        by_admin=by_admin,
        redirect_uri=operations.redirect_uri(app_settings),
        scopes=SCOPE,
        programmes=PROGRAMMES,
        approve_form=ApproveForm(),
    )
    return page, 200 if request.method == "GET" else 400


def _events_page(company_id: int, *, by_admin: bool):
    company_name = _company_name(company_id) if by_admin else current_user.company_name
    listed = queries.identity_events(portal_context().db, company_id)
    return render_template(
        "sso/events.html", events=listed, company_name=company_name, company_id=company_id, by_admin=by_admin
    )
