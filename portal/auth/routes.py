import time

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user, logout_user

from portal.auth import operations, queries, throttle
from portal.auth.forms import AddressForm, LoginForm
from portal.auth.guesses import guess_refused, password_guesses
from portal.core import clock
from portal.sso import password_sign_in_allowed, provider_for_address
from portal.web.access import public, roles_required
from portal.web.extensions import portal_context
from portal.web.redirects import same_site_path
from portal.web.sessions import offered_sign_in_address, start_session

bp = Blueprint("auth", __name__)


@bp.route("/login", methods=["GET", "POST"])
@password_guesses
@public
def login():
    """Address first: an address at a domain whose company signs in through its own provider is sent
    there; any other goes on to the password (a form that posts both at once, as scripts do, too)."""
    if current_user.is_authenticated:
        return redirect(url_for("main.home"))
    if request.method == "POST" and "password" not in request.form:
        address = AddressForm()
        if not address.validate_on_submit():
            return _login_page(address, step="address"), 400
        provider = provider_for_address(portal_context().db, address.email.data)
        if provider is not None:
            # A page with a link onward, not a redirect: the pages' CSP (form-action 'self') stops a
            # form's answer from redirecting to another site, which the provider is.
            onward = url_for("sso.start", domain=address.email.data.rpartition("@")[2].lower())
            return render_template("auth/to_provider.html", onward=onward, company=provider.company_name)
        form = LoginForm(formdata=None, email=address.email.data)
        return _login_page(form, step="password"), 200
    form = LoginForm()
    if form.validate_on_submit():
        user = _check_password(form.email.data, form.password.data)
        if user is not None and not password_sign_in_allowed(portal_context().db, user.company_id):
            form.form_errors.append(_("Your company signs in through its own identity provider, not with a password."))
        elif user is not None:
            start_session(user)
            return redirect(same_site_path(request.args.get("next")) or url_for("main.home"))
        else:
            # One answer whether or not the address has an account (GOV.UK's sign-in pattern): next
            # to the password, which is what a person corrects.
            form.password.errors.append(_("Wrong email or password."))
    if request.method == "GET":
        # After a password reset, the account's address: the password step at once, unless the
        # address belongs to a company that signs in through its own provider.
        address = offered_sign_in_address()
        if address and provider_for_address(portal_context().db, address) is None:
            return _login_page(LoginForm(formdata=None, email=address), step="password"), 200
        return _login_page(AddressForm(formdata=None, email=address), step="address"), 200
    return _login_page(form, step="password"), 401


def _login_page(form: AddressForm, *, step: str) -> str:
    # DEMO_LOGINS is empty unless PORTAL_ENV=development (portal/__init__.py).
    return render_template(
        "auth/login.html", form=form, step=step, demo_logins=current_app.config.get("DEMO_LOGINS", ())
    )


def _check_password(email: str, password: str) -> queries.User | None:
    """authenticate, slowed down per address after repeated failures (see portal/auth/throttle.py)."""
    db = portal_context().db
    failures = throttle.recent_failures(db, email, now=clock.utcnow())
    time.sleep(throttle.delay_after(failures))
    user = queries.authenticate(db, email, password)
    if user is None:
        guess_refused(db, email, now=clock.utcnow())
    elif failures:
        throttle.forget_failures(db, email)
    return user


@bp.post("/logout")
@roles_required("admin", "manager", "employee")
def logout():
    operations.sign_out(portal_context().db, user_id=current_user.id)
    logout_user()
    flash(_("You are signed out."), "info")
    return redirect(url_for("auth.login"))
