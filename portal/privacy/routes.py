"""/admin/privacy: an admin finds, downloads or erases a person's data; /account/data and
/account/erase: a person's own. Every download and erasure is recorded (privacy_events)."""

from __future__ import annotations

import time

from flask import Blueprint, Response, flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from flask_login import current_user, logout_user

from portal.auth import guess_delay, guess_refused, password_guesses, verify_password
from portal.core import clock
from portal.core.i18n import N_
from portal.privacy import operations, queries, retention
from portal.privacy.export import data_zip
from portal.privacy.forms import EraseOwnAccountForm, FindPersonForm, PersonActionForm
from portal.web.access import roles_required
from portal.web.extensions import portal_context
from portal.web.forms import error_message
from portal.web.i18n import current_language

bp = Blueprint("privacy", __name__)
PORTAL_NAME = N_("the TEEI partner portal")


@bp.route("/admin/privacy", methods=["GET", "POST"])
@roles_required("admin")
def find_person():
    form = FindPersonForm()
    data = None
    if form.validate_on_submit():
        data = queries.personal_data(portal_context().db, form.email.data)
    action_form = PersonActionForm(formdata=None, data={"email": data.address if data else ""})
    status = 200 if not form.errors else 400
    return render_template(
        "privacy/find.html",
        form=form,
        data=data,
        action_form=action_form,
        sections=queries.SECTIONS,
        holdings=retention.holdings(portal_context().db, portal_context().settings),
        last_copy=retention.last_copy(portal_context().db, portal_context().settings),
    ), status


@bp.post("/admin/privacy/download")
@roles_required("admin")
def download():
    form = PersonActionForm()
    if not form.validate_on_submit():
        return redirect(url_for("privacy.find_person"))
    return _download(form.email.data)


@bp.post("/admin/privacy/erase")
@roles_required("admin")
def erase():
    form = PersonActionForm()
    if not form.validate_on_submit():
        return redirect(url_for("privacy.find_person"))
    ctx = portal_context()
    data = queries.personal_data(ctx.db, form.email.data)
    if form.confirmed.data != "yes":
        return render_template(
            "privacy/confirm_erase.html",
            data=data,
            form=form,
            sections=queries.SECTIONS,
            last_copy=retention.last_copy(ctx.db, ctx.settings),
        )
    try:
        erasure = operations.erase_person(
            ctx, address=data.address, actor_user_id=current_user.id, now=clock.utcnow(), holds_data=data.total > 0
        )
    except operations.NothingToErase as error:
        flash(error_message(error), "info")
        return redirect(url_for("privacy.find_person"))
    if not erasure.done:
        said = ngettext(
            "Nothing was erased yet: %(num)d email to this address was already with the provider, or on "
            "its way to it, and may still go out. Erase again in a minute.",
            "Nothing was erased yet: %(num)d emails to this address were already with the provider, or on "
            "their way to it, and may still go out. Erase again in a minute.",
            erasure.waiting_for,
        )
        if erasure.emails_cancelled:
            said += " " + ngettext(
                "%(num)d email not yet sent was cancelled.",
                "%(num)d emails not yet sent were cancelled.",
                erasure.emails_cancelled,
            )
        flash(said, "error")
        return redirect(url_for("privacy.find_person"))
    flash(
        ngettext(
            "Erased. The records that stay (hours, email statuses) now name %(pseudonym)s; "
            "%(num)d unsent email was cancelled.",
            "Erased. The records that stay (hours, email statuses) now name %(pseudonym)s; "
            "%(num)d unsent emails were cancelled.",
            erasure.emails_cancelled,
            pseudonym=erasure.pseudonym,
        ),
        "success",
    )
    return redirect(url_for("privacy.find_person"))


@bp.post("/account/data")
@roles_required("admin", "manager", "employee")
def own_data():
    return _download(current_user.email)


@bp.route("/account/erase", methods=["GET", "POST"])
@password_guesses  # its guesses count with sign-in's, per client and address
@roles_required("employee")
def erase_own_account():
    form = EraseOwnAccountForm()
    ctx = portal_context()
    if form.validate_on_submit():
        time.sleep(guess_delay(ctx.db, current_user.email, now=clock.utcnow()))  # slowed like sign-in
        if not verify_password(ctx.db, current_user.id, form.current_password.data):
            guess_refused(ctx.db, current_user.email, now=clock.utcnow())
            form.current_password.errors.append(_("That is not your password."))
        else:
            erasure = operations.erase_person(
                ctx, address=current_user.email, actor_user_id=current_user.id, now=clock.utcnow(), holds_data=True
            )
            if erasure.done:
                logout_user()
                flash(_("Your account is erased. Thank you for volunteering with TEEI."), "success")
                return redirect(url_for("auth.login"))
            flash(_("An email to you is being sent right now. Try again in a minute."), "error")
    return render_template(
        "privacy/erase_own.html", form=form, last_copy=retention.last_copy(ctx.db, ctx.settings)
    ), 200 if not form.errors else 400


def _download(address: str) -> Response:
    ctx, now = portal_context(), clock.utcnow()
    data = queries.personal_data(ctx.db, address)
    operations.record_download(ctx.db, subject_user_id=data.user_id, actor_user_id=current_user.id, now=now)
    archive = data_zip(data, portal_name=_(PORTAL_NAME), made_at=now, language=current_language())
    filename = f"personal-data-{now:%Y-%m-%d}.zip"  # no address in a file name a browser keeps
    return Response(
        archive,
        mimetype="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"},
    )
