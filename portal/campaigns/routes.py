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
            return _to_campaign(campaign_id)
    return render_template("campaigns/new.html", form=form), 400 if form.errors else 200


@bp.route("/<int:campaign_id>/edit", methods=["GET", "POST"])
@roles_required("admin")
def edit(campaign_id: int):
    page = queries.campaign_page(portal_context().db, campaign_id, current_language())
    if page is None:
        abort(404)
    if not page.can_send:
        flash(_("Only a draft can be edited. Duplicate this campaign to write a new one from it."), "error")
        return _to_campaign(campaign_id)
    fields = ("name", "subject", "body", "audience", "topic", "subject_nb", "body_nb")
    form = _compose_form(data={key: page.campaign[key] for key in fields})
    if form.validate_on_submit():
        try:
            operations.update_draft(portal_context().db, campaign_id=campaign_id, **_content(form))
        except InputError as error:
            form.form_errors.append(_said(error))
        else:
            flash(_("Draft saved."), "success")
            return _to_campaign(campaign_id)
    return render_template("campaigns/new.html", form=form, campaign=page.campaign), 400 if form.errors else 200


@bp.post("/<int:campaign_id>/duplicate")
@roles_required("admin")
def duplicate(campaign_id: int):
    if not DuplicateForm().validate_on_submit():
        flash(_(OUT_OF_DATE), "error")
        return _to_campaign(campaign_id)
    try:
        copy_id = operations.duplicate(
            portal_context().db, campaign_id=campaign_id, admin_id=current_user.id, copy_of=_("Copy of %(name)s")
        )
    except operations.CampaignError as error:
        flash(_said(error), "error")
        return redirect(url_for("campaigns.index"), 303)
    flash(_("A copy is saved as a new draft. Edit it, then send it."), "success")
    return _to_campaign(copy_id)


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
        return _to_campaign(campaign_id)
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
    return _to_campaign(campaign_id)


@bp.get("/<int:campaign_id>/send/confirm")
@roles_required("admin")
def confirm_send_page(campaign_id: int):
    """The confirmation that states the reach (nothing is sent), reached by a GET: the campaign
    page's "Send campaign…" asks for it, so Back after "Yes, send" comes here again (and on to the
    campaign, once it is no longer a draft), never to a form's answer that asks to be sent again."""
    form = SendForm(request.args, meta={"csrf": False})
    if not form.validate():
        if set(form.errors) == {"send_at"}:  # typed on the campaign's page: that page, the error at it
            return _show_page(campaign_id, form), 400
        flash(_(OUT_OF_DATE), "error")
        return _to_campaign(campaign_id)
    send_at = _send_at(form.send_at.data)
    if isinstance(send_at, str):  # unreadable or past: the campaign's page, the time as typed
        form.send_at.errors = [*form.send_at.errors, send_at]
        return _show_page(campaign_id, form), 400
    return _confirmation(campaign_id, form.send_at.data)


@bp.post("/<int:campaign_id>/send/confirm")
@roles_required("admin")
def confirm_send(campaign_id: int):
    """The confirmation asked by a POST: redirected (303) to the page above, which a GET shows."""
    form = SendForm()
    if not form.validate_on_submit():
        flash(_(OUT_OF_DATE), "error")
        return _to_campaign(campaign_id)
    return redirect(url_for(".confirm_send_page", campaign_id=campaign_id, send_at=form.send_at.data or None), 303)


@bp.post("/<int:campaign_id>/send")
@roles_required("admin")
def send(campaign_id: int):
    """Send or schedule (CONTRACT.md). With `confirm_reach`, the number the confirmation page showed,
    nothing is sent if the audience has another size now: the confirmation again, with the new
    number. Without it, the answer is the confirmation page, and nothing is sent. Every redirect
    after this POST is a 303, so the browser's Back and Reload never post it again."""
    ctx = portal_context()
    form = SendForm()
    if not form.validate_on_submit():
        flash(_(OUT_OF_DATE), "error")
        return _to_campaign(campaign_id)
    if not form.confirm_reach.data:
        return _confirmation(campaign_id, form.send_at.data)
    send_at = _send_at(form.send_at.data)
    if isinstance(send_at, str):
        flash(send_at, "error")
        return _to_campaign(campaign_id)
    try:
        result = operations.send(
            ctx,
            campaign_id=campaign_id,
            admin_id=current_user.id,
            send_at=send_at,
            expected_reach=int(form.confirm_reach.data),
        )
    except operations.ReachChanged as error:
        changed = ngettext(
            "The audience changed since the confirmation: it now reaches %(num)d person.",
            "The audience changed since the confirmation: it now reaches %(num)d people.",
            error.reach,
        )
        flash(changed, "error")
        return redirect(url_for(".confirm_send_page", campaign_id=campaign_id, send_at=form.send_at.data or None), 303)
    except operations.CampaignError as error:
        flash(_said(error), "error")
        return _to_campaign(campaign_id)
    if result.started:
        message = ngettext(
            "Sending to %(num)d person. Progress shows below.",
            "Sending to %(num)d people. Progress shows below.",
            result.recipients,
        )
        flash(message, "success")
    else:
        flash(_("Scheduled for %(time)s. You can cancel it until then.", time=_shown_time(send_at)), "success")
    return _to_campaign(campaign_id)


def _to_campaign(campaign_id: int):
    """Back to the campaign's page after a POST (or a confirmation it can no longer have): a 303."""
    return redirect(url_for("campaigns.show", campaign_id=campaign_id), 303)


def _send_at(typed: str | None):
    """The typed send time, read in the portal's zone: a UTC datetime, None for now, or the message
    (a str) that says why it cannot be used (unreadable, or past)."""
    try:
        send_at = operations.parse_send_at(typed, _zone())
        if send_at is not None and send_at <= clock.utcnow():
            raise operations.CampaignError(operations.PAST)
    except operations.CampaignError as error:
        return _said(error)
    return send_at


def _confirmation(campaign_id: int, typed: str | None):
    """The confirmation page for sending at `typed` (empty: now), stating the reach as of now."""
    send_at = _send_at(typed)
    if isinstance(send_at, str):
        flash(send_at, "error")
        return _to_campaign(campaign_id)
    page = queries.campaign_page(portal_context().db, campaign_id, current_language())
    if page is None:
        abort(404)
    if not page.can_send:
        flash(_(_NOT_A_DRAFT[page.campaign["status"]]), "error")
        return _to_campaign(campaign_id)
    html = render_template(
        "campaigns/confirm_send.html",
        page=page,
        form=SendForm(formdata=None, data={"send_at": typed, "confirm_reach": page.reach.recipients}),
        send_at=_shown_time(send_at) if send_at else None,
        count=page.reach.recipients,
        version_names=versions.NAMES,
    )
    # Never kept by the browser: Back after "Yes, send" asks the portal again, which answers with
    # the campaign (no longer a draft), never a stored page still offering to send.
    return html, {"Cache-Control": "no-store"}


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
            return _to_campaign(campaign_id)
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
    return _to_campaign(campaign_id)


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
