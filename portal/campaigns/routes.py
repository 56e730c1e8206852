"""The admin's campaign pages: list, compose, edit or duplicate a draft, one campaign (preview,
test, send after a confirmation that states the reach, cancel)."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, url_for
from flask_login import current_user

from portal.campaigns import operations, queries
from portal.campaigns.forms import CancelForm, ComposeForm, DuplicateForm, SendForm, TestSendForm
from portal.core import clock
from portal.core.periods import report_timezone
from portal.core.text import InputError
from portal.web.access import roles_required
from portal.web.extensions import portal_context

bp = Blueprint("campaigns", __name__, url_prefix="/admin/campaigns")
OUT_OF_DATE = "The form was out of date. Reload the page and try again."


def _zone():
    return report_timezone(portal_context().settings)


@bp.get("")
@roles_required("admin")
def index():
    return render_template("campaigns/index.html", campaigns=queries.list_campaigns(portal_context().db))


def _compose_form(**kwargs) -> ComposeForm:
    form = ComposeForm(**kwargs)
    form.audience.choices = [("", "Choose an audience"), *queries.audience_options(portal_context().db)]
    return form


@bp.route("/new", methods=["GET", "POST"])
@roles_required("admin")
def new():
    form = _compose_form()
    if form.validate_on_submit():
        try:
            campaign_id = operations.create_campaign(
                portal_context().db,
                admin_id=current_user.id,
                name=form.name.data,
                subject=form.subject.data,
                body=form.body.data,
                audience=form.audience.data,
            )
        except InputError as error:  # a company removed since the page was drawn, too
            form.form_errors.append(str(error))
        else:
            flash("Draft saved. Check the preview and send yourself a test before you send it.", "success")
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    return render_template("campaigns/new.html", form=form), 400 if form.errors else 200


@bp.route("/<int:campaign_id>/edit", methods=["GET", "POST"])
@roles_required("admin")
def edit(campaign_id: int):
    page = queries.campaign_page(portal_context().db, campaign_id)
    if page is None:
        abort(404)
    if not page.can_send:
        flash("Only a draft can be edited. Duplicate this campaign to write a new one from it.", "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    form = _compose_form(data={key: page.campaign[key] for key in ("name", "subject", "body", "audience")})
    if form.validate_on_submit():
        try:
            operations.update_draft(
                portal_context().db,
                campaign_id=campaign_id,
                name=form.name.data,
                subject=form.subject.data,
                body=form.body.data,
                audience=form.audience.data,
            )
        except InputError as error:
            form.form_errors.append(str(error))
        else:
            flash("Draft saved.", "success")
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    return render_template("campaigns/new.html", form=form, campaign=page.campaign), 400 if form.errors else 200


@bp.post("/<int:campaign_id>/duplicate")
@roles_required("admin")
def duplicate(campaign_id: int):
    if not DuplicateForm().validate_on_submit():
        flash(OUT_OF_DATE, "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    try:
        copy_id = operations.duplicate(portal_context().db, campaign_id=campaign_id, admin_id=current_user.id)
    except operations.CampaignError as error:
        flash(str(error), "error")
        return redirect(url_for("campaigns.index"))
    flash("A copy is saved as a new draft. Edit it, then send it.", "success")
    return redirect(url_for("campaigns.show", campaign_id=copy_id))


@bp.get("/<int:campaign_id>")
@roles_required("admin")
def show(campaign_id: int):
    page = queries.campaign_page(portal_context().db, campaign_id)
    if page is None:
        abort(404)
    return render_template(
        "campaigns/show.html",
        page=page,
        test_form=TestSendForm(),
        zone=portal_context().settings.portal_timezone,
        meanings=queries.OUTCOME_MEANING,
        now_local=clock.display_time(clock.now_iso(), _zone()),
    )


@bp.post("/<int:campaign_id>/test")
@roles_required("admin")
def test_send(campaign_id: int):
    form = TestSendForm()
    if not form.validate_on_submit():
        flash(OUT_OF_DATE, "error")
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


def _people(count: int) -> str:
    return f"{count} {'person' if count == 1 else 'people'}"


@bp.post("/<int:campaign_id>/send/confirm")
@roles_required("admin")
def confirm_send(campaign_id: int):
    """The page's "Send campaign…": the confirmation that states the reach (nothing is sent)."""
    return _send_or_confirm(campaign_id, confirming=True)


@bp.post("/<int:campaign_id>/send")
@roles_required("admin")
def send(campaign_id: int):
    """Send or schedule (CONTRACT.md). With `confirm_reach`, the number the confirmation page showed,
    nothing is sent if the audience has another size now: the page asks again with the new number."""
    return _send_or_confirm(campaign_id, confirming=False)


def _send_or_confirm(campaign_id: int, *, confirming: bool):
    ctx = portal_context()
    form = SendForm()
    if not form.validate_on_submit():
        flash(OUT_OF_DATE, "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    zone = _zone()
    try:
        send_at = operations.parse_send_at(form.send_at.data, zone)
        if send_at is not None and send_at <= clock.utcnow():
            raise operations.CampaignError(
                "The send time has passed. Choose a time in the future, or leave it empty to send now."
            )
    except operations.CampaignError as error:
        flash(str(error), "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    changed = None
    if not confirming:
        try:
            result = operations.send(
                ctx,
                campaign_id=campaign_id,
                admin_id=current_user.id,
                send_at=send_at,
                expected_reach=int(form.confirm_reach.data) if form.confirm_reach.data else None,
            )
        except operations.ReachChanged as error:
            changed = str(error)
        except operations.CampaignError as error:
            flash(str(error), "error")
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
        else:
            if result.started:
                flash(f"Sending to {_people(result.recipients)}. Progress shows below.", "success")
            else:
                flash(
                    f"Scheduled for {clock.display_time(clock.iso(send_at), zone)}. You can cancel it until then.",
                    "success",
                )
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    page = queries.campaign_page(ctx.db, campaign_id)
    if page is None:
        abort(404)
    if not page.can_send:
        flash(f"This campaign is {page.status_label.lower()}; it is sent only once.", "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    return render_template(
        "campaigns/confirm_send.html",
        page=page,
        form=SendForm(formdata=None, data={"send_at": form.send_at.data, "confirm_reach": page.reach.recipients}),
        send_at=clock.display_time(clock.iso(send_at), zone) if send_at else None,
        people=_people(page.reach.recipients),
        changed=changed,
    )


@bp.post("/<int:campaign_id>/cancel")
@roles_required("admin")
def cancel(campaign_id: int):
    if not CancelForm().validate_on_submit():
        flash(OUT_OF_DATE, "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    page = queries.campaign_page(portal_context().db, campaign_id)
    try:
        stopped = operations.cancel(portal_context().db, campaign_id=campaign_id)
    except operations.CampaignError as error:
        flash(str(error), "error")
    else:
        if page and page.campaign["status"] == "draft":
            flash("Draft discarded: it will not be sent. Duplicate it if you want it back.", "success")
        else:
            flash(f"Cancelled. {stopped} email{'' if stopped == 1 else 's'} not yet sent will not go out.", "success")
    return redirect(url_for("campaigns.show", campaign_id=campaign_id))
