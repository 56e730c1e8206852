"""Forgotten passwords and the account page.

A reset link's token is swapped for session state on the first GET, then the page moves to a
clean URL, so the token does not stay in the address bar, the history or a Referer.
"""

import time

from flask import Blueprint, flash, redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal.account import operations, queries, tokens
from portal.account.forms import AccountForm, ForgotPasswordForm, ResetPasswordForm
from portal.auth import AccountError, guess_delay, guess_refused, load_user, password_guesses
from portal.core import clock
from portal.core.i18n import N_
from portal.web.access import public, roles_required
from portal.web.extensions import limiter, portal_context
from portal.web.forms import error_message
from portal.web.i18n import current_language
from portal.web.sessions import offer_sign_in_as, start_session

bp = Blueprint("account", __name__)

FORGOT_LIMIT = "5 per 15 minutes"
RESET_LIMIT = "10 per 15 minutes"
RESET_LINK_KEY = "password_reset_link"
SAME_ANSWER = N_(
    "If an account uses that address, a link to reset its password is on its way. "
    "It works once, for %(minutes)d minutes."
)


@bp.route("/password/forgot", methods=["GET", "POST"])
@limiter.limit(FORGOT_LIMIT, methods=["POST"], scope="password-forgot")
@public
def forgot():
    form = ForgotPasswordForm()
    if form.validate_on_submit():
        operations.ask_for_password_reset(
            portal_context().db, email=form.email.data, now=clock.utcnow(), language=current_language()
        )
        flash(_(SAME_ANSWER, minutes=operations.RESET_MINUTES), "success")
        return redirect(url_for("account.forgot"))
    return render_template("account/forgot.html", form=form), 200 if request.method == "GET" else 400


@bp.route("/password/reset/<token>", methods=["GET", "POST"])
@bp.route("/password/reset", methods=["GET", "POST"])
@limiter.limit(RESET_LIMIT, methods=["POST"], scope="password-reset")
@public
def reset(token: str | None = None):
    if token is not None and request.method == "GET":
        # The session (a signed, readable cookie) keeps only the token's hash, the server's reference
        # to the link: the token itself is in no cookie, address bar, history or Referer.
        session[RESET_LINK_KEY] = tokens.token_hash(token)
        return redirect(url_for("account.reset"))
    token_hash = tokens.token_hash(token) if token else session.get(RESET_LINK_KEY)
    db = portal_context().db
    problem = queries.reset_link_problem(db, token_hash) if token_hash else "unknown"
    if problem is not None:
        session.pop(RESET_LINK_KEY, None)
        return render_template("account/reset_unavailable.html", problem=problem), 404 if problem == "unknown" else 410
    form = ResetPasswordForm()
    if form.validate_on_submit():
        try:
            user_id = operations.reset_password(db, token_hash=token_hash, password=form.password.data)
        except (operations.PasswordResetError, AccountError) as error:
            form.password.errors.append(error_message(error))
        else:
            session.pop(RESET_LINK_KEY, None)
            offer_sign_in_as(load_user(db, user_id).email)
            flash(_("Your password is changed. Sign in with your new password."), "success")
            return redirect(url_for("auth.login"))
    return render_template("account/reset.html", form=form), 200 if request.method == "GET" else 400


@bp.route("/account", methods=["GET", "POST"])
# The current password is guessed at like a sign-in, so its guesses count with sign-in's: per
# client (portal/auth/guesses.py) and per address (the slow-down of portal/auth/throttle.py).
@password_guesses
@roles_required("admin", "manager", "employee")
def account():
    form = AccountForm(data={"name": current_user.name})
    if form.validate_on_submit():
        db = portal_context().db
        if form.new_password.data:
            time.sleep(guess_delay(db, current_user.email, now=clock.utcnow()))
        try:
            changed = operations.update_account(
                db,
                user_id=current_user.id,
                name=form.name.data,
                current_password=form.current_password.data or "",
                new_password=form.new_password.data or "",
            )
        except operations.WrongCurrentPassword as error:
            guess_refused(db, current_user.email, now=clock.utcnow())
            form.current_password.errors.append(error_message(error))
        except AccountError as error:
            form.form_errors.append(error_message(error))
        else:
            if changed:
                # The change ended every session of the account (other browsers, a stolen cookie);
                # this browser, which just proved the password, goes on under the new generation.
                start_session(load_user(portal_context().db, current_user.id))
            flash(_("Your name and password are saved.") if changed else _("Your name is saved."), "success")
            return redirect(url_for("account.account"))
    return render_template("account/account.html", form=form), 200 if request.method == "GET" else 400
