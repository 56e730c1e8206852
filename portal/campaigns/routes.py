"""The admin's campaign pages: list, compose, edit or duplicate a draft, one campaign (preview,
test, send after a confirmation that states the reach, cancel)."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from flask_login import current_user

from portal.campaigns import operations, queries, versions
from portal.campaigns.forms import CancelForm, ComposeForm, DuplicateForm, SendForm, TestSendForm
from portal.core import clock
from portal.core.i18n import ENGLISH, N_, moment
from portal.core.periods import report_timezone
from portal.core.text import InputError
from portal.web.access import roles_required
from portal.web.extensions import portal_context
from portal.web.i18n import current_language

bp = Blueprint("campaigns", __name__, url_prefix="/admin/campaigns")
OUT_OF_DATE = operations.OUT_OF_DATE
# Full sentences per status, for a campaign that is no longer a draft.
_NOT_A_DRAFT = {
    "scheduled": N_("This campaign is scheduled; it is sent only once."),
    "sending": N_("This campaign is sending; it is sent only once."),
    "sent": N_("This campaign is sent; it is sent only once."),
    "cancelled": N_("This campaign is cancelled; it is sent only once."),
}
# Why a campaign's cancel page is not offered (the operation refuses these with the same words).
_NOT_CANCELLABLE = {
    "cancelled": N_("This campaign was already cancelled; there is nothing to cancel."),
    "sent": N_("Every email of this campaign has gone to the provider; there is nothing to cancel."),
}


def _zone():
    return report_timezone(portal_context().settings)


def _said(error: InputError) -> str:
    """An operation's refusal in the page's language (marked where it is raised: `message`, `values`)."""
    return _(getattr(error, "message", str(error)), **getattr(error, "values", {}))


def _shown_time(when) -> str:
    """A time as the page's language writes it, in the portal's zone, named."""
    return moment(when, _zone(), current_language())


@bp.get("")
@roles_required("admin")
def index():
    campaigns = queries.list_campaigns(portal_context().db, current_language())
    return render_template("campaigns/index.html", campaigns=campaigns)


def _compose_form(**kwargs) -> ComposeForm:
    form = ComposeForm(**kwargs)
    options = queries.audience_options(portal_context().db, current_language())
    form.audience.choices = [("", _("Choose an audience")), *options]
    form.topic.choices = queries.topic_options(portal_context().db, current_language())
    return form


def _content(form: ComposeForm) -> dict:
    return {
        "name": form.name.data,
        "subject": form.subject.data,
        "body": form.body.data,
        "audience": form.audience.data,
        "topic": form.topic.data,
        "subject_nb": form.subject_nb.data,
        "body_nb": form.body_nb.data,
    }


@bp.route("/new", methods=["GET", "POST"])
@roles_required("admin")
def new():
    form = _compose_form()
    if form.validate_on_submit():
        try:
            campaign_id = operations.create_campaign(portal_context().db, admin_id=current_user.id, **_content(form))
        except InputError as error:  # a company removed since the page was drawn, too
            form.form_errors.append(_said(error))
        else:
            flash(_("Draft saved. Check the preview and send yourself a test before you send it."), "success")
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    return render_template("campaigns/new.html", form=form), 400 if form.errors else 200


@bp.route("/<int:campaign_id>/edit", methods=["GET", "POST"])
@roles_required("admin")
def edit(campaign_id: int):
    page = queries.campaign_page(portal_context().db, campaign_id, current_language())
    if page is None:
        abort(404)
    if not page.can_send:
        flash(_("Only a draft can be edited. Duplicate this campaign to write a new one from it."), "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    fields = ("name", "subject", "body", "audience", "topic", "subject_nb", "body_nb")
    form = _compose_form(data={key: page.campaign[key] for key in fields})
    if form.validate_on_submit():
        try:
            operations.update_draft(portal_context().db, campaign_id=campaign_id, **_content(form))
        except InputError as error:
            form.form_errors.append(_said(error))
        else:
            flash(_("Draft saved."), "success")
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    return render_template("campaigns/new.html", form=form, campaign=page.campaign), 400 if form.errors else 200


@bp.post("/<int:campaign_id>/duplicate")
@roles_required("admin")
def duplicate(campaign_id: int):
    if not DuplicateForm().validate_on_submit():
        flash(_(OUT_OF_DATE), "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    try:
        copy_id = operations.duplicate(
            portal_context().db, campaign_id=campaign_id, admin_id=current_user.id, copy_of=_("Copy of %(name)s")
        )
    except operations.CampaignError as error:
        flash(_said(error), "error")
        return redirect(url_for("campaigns.index"))
    flash(_("A copy is saved as a new draft. Edit it, then send it."), "success")
    return redirect(url_for("campaigns.show", campaign_id=copy_id))


@bp.get("/<int:campaign_id>")
@roles_required("admin")
def show(campaign_id: int):
    return _show_page(campaign_id, SendForm(formdata=None))


def _show_page(campaign_id: int, send_form: SendForm):
    page = queries.campaign_page(portal_context().db, campaign_id, current_language())
    if page is None:
        abort(404)
    return render_template(
        "campaigns/show.html",
        page=page,
        test_form=TestSendForm(),
        send_form=send_form,
        zone=portal_context().settings.portal_timezone,
        meanings=queries.OUTCOME_MEANING,
        outcome_labels=queries.OUTCOME_LABEL,
        version_names=versions.NAMES,
        now_local=_shown_time(clock.utcnow()),
    )


@bp.post("/<int:campaign_id>/test")
@roles_required("admin")
def test_send(campaign_id: int):
    form = TestSendForm()
    if not form.validate_on_submit():
        flash(_(OUT_OF_DATE), "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    language = form.language.data or ENGLISH
    try:
        new = operations.send_test(
            portal_context(),
            campaign_id=campaign_id,
            admin=current_user,
            request_id=form.request_id.data,
            language=language,
        )
    except operations.CampaignError as error:
        flash(_said(error), "error")
    else:
        if not new:
            flash(_("That test was already sent (the button was pressed twice); one email is on its way."), "success")
        elif language == ENGLISH:
            flash(_("A test copy is on its way to %(email)s.", email=current_user.email), "success")
        else:
            flash(
                _("A test copy of the Norwegian version is on its way to %(email)s.", email=current_user.email),
                "success",
            )
    return redirect(url_for("campaigns.show", campaign_id=campaign_id))


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
        if confirming and set(form.errors) == {"send_at"}:  # typed on the campaign's page: see below
            return _show_page(campaign_id, form), 400
        flash(_(OUT_OF_DATE), "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    zone = _zone()
    try:
        send_at = operations.parse_send_at(form.send_at.data, zone)
        if send_at is not None and send_at <= clock.utcnow():
            raise operations.CampaignError(operations.PAST)
    except operations.CampaignError as error:
        if not confirming:  # the confirmation page's hidden copy: the campaign's page says what changed
            flash(_said(error), "error")
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
        # Typed on the campaign's page: the page again, the time as typed, the message next to it.
        form.send_at.errors.append(_said(error))
        return _show_page(campaign_id, form), 400
    changed = None
    # Without `confirm_reach` (the reach a confirmation page stated) nothing is sent: the answer is
    # that page (CONTRACT.md, README "Campaigns").
    if not confirming and form.confirm_reach.data:
        try:
            result = operations.send(
                ctx,
                campaign_id=campaign_id,
                admin_id=current_user.id,
                send_at=send_at,
                expected_reach=int(form.confirm_reach.data) if form.confirm_reach.data else None,
            )
        except operations.ReachChanged as error:
            changed = ngettext(
                "The audience changed since the confirmation: it now reaches %(num)d person.",
                "The audience changed since the confirmation: it now reaches %(num)d people.",
                error.reach,
            )
        except operations.CampaignError as error:
            flash(_said(error), "error")
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
        else:
            if result.started:
                message = ngettext(
                    "Sending to %(num)d person. Progress shows below.",
                    "Sending to %(num)d people. Progress shows below.",
                    result.recipients,
                )
                flash(message, "success")
            else:
                flash(
                    _("Scheduled for %(time)s. You can cancel it until then.", time=_shown_time(send_at)),
                    "success",
                )
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    page = queries.campaign_page(ctx.db, campaign_id, current_language())
    if page is None:
        abort(404)
    if not page.can_send:
        flash(_(_NOT_A_DRAFT[page.campaign["status"]]), "error")
        return redirect(url_for("campaigns.show", campaign_id=campaign_id))
    return render_template(
        "campaigns/confirm_send.html",
        page=page,
        form=SendForm(formdata=None, data={"send_at": form.send_at.data, "confirm_reach": page.reach.recipients}),
        send_at=_shown_time(send_at) if send_at else None,
        count=page.reach.recipients,
        version_names=versions.NAMES,
        changed=changed,
    )


@bp.route("/<int:campaign_id>/cancel", methods=["GET", "POST"])
@roles_required("admin")
def cancel(campaign_id: int):
    """Cancel a campaign (or discard a draft). The campaign's page links here: this page says what
    stops, what may still go out and that it is final; only its "Yes" (`confirmed=yes`) cancels.
    A post without it answers this page and changes nothing."""
    form = CancelForm()
    page = queries.campaign_page(portal_context().db, campaign_id, current_language())
    if page is None:
        abort(404)
    if request.method == "GET" or not form.validate_on_submit() or not form.is_confirmed:
        if not page.can_cancel:
            flash(_(_NOT_CANCELLABLE.get(page.campaign["status"], OUT_OF_DATE)), "error")
            return redirect(url_for("campaigns.show", campaign_id=campaign_id))
        return render_template("campaigns/confirm_cancel.html", page=page)
    try:
        done = operations.cancel(portal_context().db, campaign_id=campaign_id)
    except operations.CampaignError as error:
        flash(_said(error), "error")
    else:
        if page.campaign["status"] == "draft":
            flash(_("Draft discarded: it will not be sent. Duplicate it if you want it back."), "success")
        else:
            flash(_cancel_said(done), "success" if not done.may_still_go_out else "warning")
    return redirect(url_for("campaigns.show", campaign_id=campaign_id))


def _cancel_said(done: operations.CancelResult) -> str:
    """What a cancel did, in the page's language: what it stopped, and what it could not promise to."""
    if not done.stopped and done.may_still_go_out:
        return ngettext(
            "Cancelled, but its %(num)d email was already with the provider, or on its way to it, and may still go out.",
            "Cancelled, but its %(num)d emails were already with the provider, or on their way to it, and may still go out.",
            done.may_still_go_out,
        )
    said = ngettext(
        "Cancelled. %(num)d email not yet sent will not go out.",
        "Cancelled. %(num)d emails not yet sent will not go out.",
        done.stopped,
    )
    if done.may_still_go_out:
        said += " " + ngettext(
            "%(num)d was already with the provider, or on its way to it, and may still go out.",
            "%(num)d were already with the provider, or on their way to it, and may still go out.",
            done.may_still_go_out,
        )
    return said
