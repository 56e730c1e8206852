"""The operator's console: /admin/outbox, one email's page, and the audited actions."""

import csv
import io

from flask import Blueprint, abort, flash, make_response, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from flask_login import current_user

from portal.console import operations, queries, words
from portal.console.forms import (
    ACTION_LABELS,
    BUTTON_LABELS,
    ActionForm,
    BulkActionForm,
    ChooseBulkActionForm,
    DifferenceForm,
    FilterForm,
    PauseForm,
)
from portal.core import clock
from portal.core.db import AmbiguousCommitError, DatabaseBusyError
from portal.core.i18n import N_
from portal.core.periods import report_timezone, today_in
from portal.outbox.operate.operator import (
    ACTIONS,
    BULK_LIMIT,
    FIGURES,
    LABELS,
    ActionRefused,
    DifferenceRefused,
    ask_provider,
    rate_limit_for,
    suppression_comparison,
)
from portal.web.access import roles_required
from portal.web.extensions import portal_context

bp = Blueprint("console", __name__, url_prefix="/admin/outbox")

FILTER_FIELDS = ("status", "family", "q", "created_from", "created_to")
# In English; translated where they are shown.
BUSY = N_("The database was busy, so nothing was changed. Please try again.")
UNCONFIRMED = N_("We could not confirm the action was saved; check the email's history before trying again.")
UNCONFIRMED_OFFER = N_("We could not confirm the change was saved; check the suppression list before trying again.")
CHOOSE_OFFER = N_("Choose one of the actions offered for the difference. Nothing was changed.")
# An offer refused: an unknown difference is not found; an offer it does not make conflicts with it;
# anything else is the provider's (busy, unreachable), a service unavailable for now.
REFUSED_STATUS = {suppression_comparison.UNKNOWN_DIFFERENCE: 404, suppression_comparison.NOT_OFFERED: 409}
DONE = {
    "retry": N_("The email will be tried again, under the same key."),
    "confirm_sent": N_("The email is recorded as sent."),
    "send_again": N_("A new email was written, under a new key."),
    "cancel": N_("The email was cancelled."),
}


@bp.context_processor
def _console_words():
    """The engine's words (statuses, a batch request's answer), as the console's pages show them."""
    return {
        "status_word": words.status_word,
        "family_word": words.family_word,
        "batch_answer": words.batch_answer,
        "pause_scope": words.pause_scope,
        "pause_actor": words.pause_actor,
        "cause_word": words.cause_word,
        "offer_word": words.offer_word,
        "comparison_code": words.comparison_code,
        "who": words.who,
        "times_stated": words.times_stated,
        "waiting_short": words.waiting_short,
        "reason_meant": words.reason_meant,
    }


def _families():
    return [family.name for family in portal_context().families]


def _filters_from(values) -> tuple[FilterForm, object]:
    form = FilterForm(values, families=_families())
    zone = report_timezone(portal_context().settings)
    if not form.validate():
        return form, queries.outbox_filter(zone=zone)
    return form, queries.outbox_filter(
        zone=zone,
        status=form.status.data or "",
        family=form.family.data if form.family.data in _families() else "",
        q=form.q.data,
        created_from=form.created_from.data,
        created_to=form.created_to.data,
    )


def _filter_args(form: FilterForm) -> dict:
    """The valid filters, as query arguments for links that keep them."""
    return {name: form[name].raw_data[0] for name in FILTER_FIELDS if form[name].raw_data and form[name].raw_data[0]}


@bp.get("/", strict_slashes=False)  # CONTRACT.md names it /admin/outbox: no redirect for that
@roles_required("admin")
def index():
    return _render_index(request.args)


def _render_index(values, bulk: ChooseBulkActionForm | None = None, pausing: PauseForm | None = None, status=None):
    ctx = portal_context()
    form, filters = _filters_from(values)
    page = queries.outbox_page(ctx.db, filters, request.args.get("cursor"))
    args = _filter_args(form) if not form.errors else {}
    return render_template(
        "console/index.html",
        form=form,
        grid=queries.count_grid(ctx.db),
        kept=words.kept(queries.retention(ctx.db, ctx.settings)),
        page=page,
        args=args,
        first_page=not request.args.get("cursor"),
        bulk=bulk or ChooseBulkActionForm(formdata=None, data=args),
        pauses=queries.sending_pauses(ctx),
        pausing=pausing or PauseForm(formdata=None, families=_families()),
        resuming=PauseForm(formdata=None, families=_families()),
    ), status or (200 if not form.errors and not (bulk and bulk.errors) else 400)


PAUSED = N_(
    "Paused: %(what)s. Every request already out has been answered, and nothing more goes out until someone resumes it."
)
PAUSED_UNCONFIRMED = N_(
    "Sending is paused, but a request already out had no answer within the provider's timeout; it may still arrive."
)
RESUMED = N_("Sending is resumed: the emails that waited are on their way, transactional ones first.")


@bp.post("/pause")
@roles_required("admin")
def pause():
    """Pause all sending, or one family's (`family`), with a `reason`: audited."""
    form = PauseForm(families=_families())
    if not form.validate_on_submit():
        return _render_index({}, pausing=form, status=400)
    try:
        result = operations.pause_sending(
            portal_context(), family=form.family.data or None, reason=form.reason.data, actor_user_id=current_user.id
        )
    except ActionRefused as error:
        form.form_errors.append(words.engine_text(str(error)))
        return _render_index({}, pausing=form, status=409)
    what = words.pause_scope(result.scope)
    flash(_(PAUSED, what=what) if result.confirmed else _(PAUSED_UNCONFIRMED), "warning")
    return redirect(url_for(".index"))


@bp.post("/resume")
@roles_required("admin")
def resume():
    """End one pause (`family`, empty for all sending), with a `reason`: audited."""
    form = PauseForm(families=_families())
    if not form.validate_on_submit():
        flash(" ".join(str(error) for errors in form.errors.values() for error in errors), "warning")
        return _render_index({}, status=400)
    try:
        operations.resume_sending(
            portal_context(), family=form.family.data or None, reason=form.reason.data, actor_user_id=current_user.id
        )
    except ActionRefused as error:
        flash(words.engine_text(str(error)), "warning")
        return redirect(url_for(".index"))
    flash(_(RESUMED), "success")
    return redirect(url_for(".index"))


def _reconciliation():
    ctx = portal_context()
    zone = report_timezone(ctx.settings)
    return queries.reconciliation(ctx.db, ctx.settings, zone=zone, today=today_in(zone), now=clock.utcnow())


@bp.get("/reconciliation")
@roles_required("admin")
def reconciliation():
    return _render_reconciliation()


def _render_reconciliation(suppression_error: str | None = None, status: int = 200):
    ctx = portal_context()
    found = _reconciliation()
    family, error = request.args.get("family", ""), None
    if family and family not in found.by_family and family not in _families():
        family, error = "", _("There is no email family called “%(family)s”. Choose one from the list.", family=family)
    rows = found.rows_of(family)  # a family that wrote nothing in these days: zeros, not an error
    return render_template(
        "console/reconciliation.html",
        found=found,
        rows=rows,
        total=found.total(rows),
        family=family,
        families=_families(),
        figures=FIGURES,
        labels=LABELS,
        no_receipt_hours=ctx.settings.outbox_no_receipt_hours,
        unexplained=queries.unexplained(ctx.db, ctx.settings, now=clock.utcnow()),
        past_memory=queries.past_provider_memory(ctx.db, ctx.settings, now=clock.utcnow()),
        retention_days=ctx.settings.provider_log_retention_days,
        suppressions=queries.suppression_comparison(ctx.db),
        suppression_error=suppression_error,
        error=error,
    ), (400 if error else status)


@bp.post("/reconciliation/suppressions/<int:difference_id>")
@roles_required("admin")
def act_on_difference(difference_id: int):
    """An offer of the suppression lists' comparison (never done without a person): the page again
    with what was done, or with why nothing was."""
    form = DifferenceForm()
    if not form.validate_on_submit():
        return _render_reconciliation(words.engine_text(CHOOSE_OFFER), status=400)
    try:
        done = operations.act_on_difference(
            portal_context(), difference_id=difference_id, offer=form.offer.data, actor_user_id=current_user.id
        )
    except DifferenceRefused as refused:
        return _render_reconciliation(words.offer_refused(refused.code), status=REFUSED_STATUS.get(refused.code, 503))
    except DatabaseBusyError:
        return _render_reconciliation(_(BUSY), status=503)
    except AmbiguousCommitError:
        flash(_(UNCONFIRMED_OFFER), "warning")
        return redirect(url_for(".reconciliation", _anchor="suppression-lists"))
    flash(words.offer_done(done.offer, done.email), "success")
    return redirect(url_for(".reconciliation", _anchor="suppression-lists"))


@bp.get("/reconciliation.csv")
@roles_required("admin")
def reconciliation_csv():
    """Every day and family of the page, one line each, and each day's all-families line."""
    found = _reconciliation()
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["day", "family", *FIGURES])
    for index, day in enumerate(found.days):
        for family in found.families:
            writer.writerow([day.isoformat(), family, *(found.by_family[family][index][f] for f in FIGURES)])
        writer.writerow([day.isoformat(), "all", *(found.totals[index][f] for f in FIGURES)])
    response = make_response(out.getvalue())
    response.headers["Content-Type"] = "text/csv; charset=utf-8"
    name = f"delivery-reconciliation-{found.days[0].isoformat()}-to-{found.days[-1].isoformat()}.csv"
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@bp.get("/<outbox_id>")
@roles_required("admin")
def detail(outbox_id: str):
    return _render_detail(outbox_id, ActionForm(formdata=None))


def _render_detail(outbox_id: str, form: ActionForm, status: int = 200, lookup=None):
    ctx = portal_context()
    found = queries.email_detail(ctx.db, outbox_id)
    if found is None:
        abort(404)
    pauses = queries.sending_pauses(ctx)
    return render_template(
        "console/detail.html",
        detail=found,
        row=found.row,
        history=words.history(found.timeline),
        waiting=words.waiting(found.row, pauses, rate_limit=ctx.settings.resend_rate_limit_per_second),
        paused=words.waiting_code(found.row, pauses) == words.PAUSED_BY_OPERATOR,
        not_retried=words.not_retried(found.row, found.actions),
        form=form,
        labels=BUTTON_LABELS,
        lookup=lookup,
    ), status


# The email's own HTML, framed on its console page: it runs nothing and loads nothing from outside
# (the frame is sandboxed too), and only the console may frame it.
EMAIL_FRAME_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; sandbox"


@bp.get("/<outbox_id>/content")
@roles_required("admin")
def content(outbox_id: str):
    html = queries.email_html(portal_context().db, outbox_id)
    # The email's page is loaded before its frame: the email may have been sent (and its content
    # deleted) in between, and a frame must not hold the portal's whole error page, menus and all.
    if html is None:
        response = make_response(render_template("console/content_gone.html"), 404)
    else:
        response = make_response(html)
    response.headers["Content-Security-Policy"] = EMAIL_FRAME_POLICY
    response.headers["X-Frame-Options"] = "SAMEORIGIN"
    response.headers["Cache-Control"] = "no-store"  # it holds an address and a personal message
    return response


@bp.post("/<outbox_id>/action")
@roles_required("admin")
def act(outbox_id: str):
    form = ActionForm()
    if not form.validate_on_submit():
        return _render_detail(outbox_id, form, status=400)
    try:
        result = operations.act_on_email(
            portal_context(),
            outbox_id=outbox_id,
            action=form.action.data,
            reason=form.reason.data,
            actor_user_id=current_user.id,
            message_id=form.message_id.data,
            duplicate_confirmed=form.confirm_duplicate.data,
        )
    except DatabaseBusyError:
        form.form_errors.append(_(BUSY))
        return _render_detail(outbox_id, form, status=503)
    except AmbiguousCommitError:
        flash(_(UNCONFIRMED), "warning")
        return redirect(url_for(".detail", outbox_id=outbox_id))
    except ActionRefused as error:
        form.form_errors.append(words.engine_text(str(error)))
        return _render_detail(outbox_id, form, status=409)
    flash(_(DONE[result.action]), "success")
    return redirect(url_for(".detail", outbox_id=outbox_id))


@bp.post("/<outbox_id>/ask-provider")
@roles_required("admin")
def ask(outbox_id: str):
    """Ask the provider whether it has this email: a read, but a call to the outside on a person's
    behalf, so a POST (with the CSRF token every POST carries), never a link a crawler follows."""
    form = ActionForm(formdata=None)
    found = queries.email_detail(portal_context().db, outbox_id)
    if found is None:
        abort(404)
    ctx = portal_context()
    slots = rate_limit_for(ctx.redis, ctx.settings.redis_url, ctx.settings.resend_rate_limit_per_second)
    lookup = ask_provider(ctx.provider, found.row, slots)
    if lookup.found is not None:
        form = ActionForm(formdata=None, data={"message_id": lookup.found.message_id})
    return _render_detail(outbox_id, form, lookup=lookup)


@bp.post("/bulk/confirm")
@roles_required("admin")
def confirm_bulk():
    """The count of emails the action would change, with the reason field, before anything changes."""
    choose = ChooseBulkActionForm()
    if not choose.validate_on_submit():
        return _render_index(request.form, bulk=choose)  # a missing or unknown action: a field error
    filter_form, filters = _filters_from(request.form)
    if filter_form.errors:
        abort(400)
    count = operations.eligible_count(portal_context(), filters, choose.action.data)
    form = BulkActionForm(formdata=None, data={**_filter_args(filter_form), "action": choose.action.data})
    return _render_bulk(form, filter_form, count)


def _render_bulk(form: BulkActionForm, filter_form: FilterForm, count: int, status: int = 200):
    form.expected_count.data = str(count)
    return render_template(
        "console/confirm_bulk.html",
        form=form,
        count=count,
        limit=BULK_LIMIT,
        label=_(ACTION_LABELS[form.action.data]) if form.action.data in ACTION_LABELS else "",
        args=_filter_args(filter_form),
    ), status


@bp.post("/bulk")
@roles_required("admin")
def act_on_list():
    form = BulkActionForm()
    filter_form, filters = _filters_from(request.form)
    if filter_form.errors:
        abort(400)
    if form.action.data not in ACTIONS:
        abort(400)  # no action this page offers: a forged or mangled post, with nothing to count
    ctx = portal_context()
    if not form.validate_on_submit() or not (form.expected_count.data or "").isdigit():
        return _render_bulk(form, filter_form, operations.eligible_count(ctx, filters, form.action.data), 400)
    try:
        result = operations.act_on_list(
            ctx,
            filters=filters,
            action=form.action.data,
            reason=form.reason.data,
            actor_user_id=current_user.id,
            expected_count=int(form.expected_count.data),
            duplicate_confirmed=form.confirm_duplicate.data,
        )
    except operations.ListChanged as changed:
        form.form_errors.append(
            ngettext(
                "The list changed since you confirmed it: %(num)d email matches now. Check and confirm again.",
                "The list changed since you confirmed it: %(num)d emails match now. Check and confirm again.",
                changed.count,
            )
        )
        return _render_bulk(form, filter_form, changed.count, 409)
    except DatabaseBusyError:
        form.form_errors.append(_(BUSY))
        return _render_bulk(form, filter_form, int(form.expected_count.data), 503)
    except AmbiguousCommitError:
        flash(_(UNCONFIRMED), "warning")
        return redirect(url_for(".index", **_filter_args(filter_form)))
    except ActionRefused as error:
        form.form_errors.append(words.engine_text(str(error)))
        return _render_bulk(form, filter_form, int(form.expected_count.data), 409)
    done = ngettext(
        "%(action)s: %(num)d email. %(done)s",
        "%(action)s: %(num)d emails. %(done)s",
        len(result.changed),
        action=_(ACTION_LABELS[result.action]),
        done=_(DONE[result.action]),
    )
    flash(done, "success")
    return redirect(url_for(".index", **_filter_args(filter_form)))
