"""The admin's campaign pages: list, compose, one campaign (preview, test, send, cancel)."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, url_for
from flask_login import current_user

from portal.campaigns import operations, queries
from portal.campaigns.forms import CancelForm, ComposeForm, SendForm, TestSendForm
from portal.core import clock
from portal.core.periods import report_timezone
from portal.web.access import roles_required
from portal.web.extensions import portal_context

bp = Blueprint("campaigns", __name__, url_prefix="/admin/campaigns")


@bp.get("")
@roles_required("admin")
def index():
    return render_template("campaigns/index.html", campaigns=queries.list_campaigns(portal_context().db))


@bp.route("/new", methods=["GET", "POST"])
@roles_required("admin")
def new():
    ctx = portal_context()
    form = ComposeForm()
    form.audience.choices = [("", "Choose an audience"), *queries.audience_options(ctx.db)]
    if form.validate_on_submit():
        try:
            campaign_id = operations.create_campaign(
                ctx.db,
                admin_id=current_user.id,
                name=form.name.data,
                subject=form.subject.data,
                body=form.body.data,
                audience=form.audience.data,
            )
        except operations.CampaignError as error:
            form.form_errors.append(str(error))
        else:
            flash("Draft saved. Check the preview and send yourself a test before you send it.", "success")
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    return render_template("campaigns/new.html", form=form)


@bp.get("/<int:campaign_id>")
@roles_required("admin")
def show(campaign_id: int):
    ctx = portal_context()
    page = queries.campaign_page(ctx.db, campaign_id)
    if page is None:
        abort(404)
    test_form = TestSendForm()
    return render_template(
        "campaigns/show.html",
        page=page,
        test_form=test_form,
        send_form=SendForm(),
        cancel_form=CancelForm(),
        tz=report_timezone(ctx.settings),
    )


@bp.post("/<int:campaign_id>/test")
@roles_required("admin")
def test_send(campaign_id: int):
    form = TestSendForm()
    if not form.validate_on_submit():
        flash("The form was out of date. Reload the page and try again.", "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    try:
        new = operations.send_test(
            portal_context(), campaign_id=campaign_id, admin=current_user, request_id=form.request_id.data
        )
    except operations.CampaignError as error:
        flash(str(error), "error")
    else:
        if new:
            flash(f"A test copy is on its way to {current_user.email}.", "success")
        else:
            flash("That test was already sent (the button was pressed twice); one email is on its way.", "success")
    return redirect(url_for("campaigns.show", campaign_id=campaign_id))


@bp.post("/<int:campaign_id>/send")
@roles_required("admin")
def send(campaign_id: int):
    ctx = portal_context()
    form = SendForm()
    if not form.validate_on_submit():
        flash("The form was out of date. Reload the page and try again.", "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    try:
        send_at = operations.parse_send_at(form.send_at.data, report_timezone(ctx.settings))
        result = operations.send(ctx, campaign_id=campaign_id, admin_id=current_user.id, send_at=send_at)
    except operations.CampaignError as error:
        flash(str(error), "error")
    else:
        if result.started:
            count = result.recipients
            flash(f"Sending to {count} {'person' if count == 1 else 'people'}. Progress shows below.", "success")
        else:
            flash(f"Scheduled for {clock.display_time(result.send_at)}. You can cancel it until then.", "success")
    return redirect(url_for("campaigns.show", campaign_id=campaign_id))


@bp.post("/<int:campaign_id>/cancel")
@roles_required("admin")
def cancel(campaign_id: int):
    if not CancelForm().validate_on_submit():
        flash("The form was out of date. Reload the page and try again.", "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    try:
        stopped = operations.cancel(portal_context().db, campaign_id=campaign_id)
    except operations.CampaignError as error:
        flash(str(error), "error")
    else:
        flash(f"Cancelled. {stopped} email{'' if stopped == 1 else 's'} not yet sent will not go out.", "success")
    return redirect(url_for("campaigns.show", campaign_id=campaign_id))
