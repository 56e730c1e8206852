"""The report emails page: a manager's choice of monthly or quarterly report emails, and a test send."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal.core.periods import MONTHLY, closes_at, last_closed, period_for, report_timezone
from portal.outbox.operate import reads
from portal.report_emails import operations, queries
from portal.report_emails.emails import DELIVERY_WORDS
from portal.report_emails.forms import SubscriptionForm, TestSendForm
from portal.report_emails.queries import FREQUENCIES, OFF
from portal.reports import closes_text, period_label
from portal.web.access import current_company_id, roles_required
from portal.web.extensions import portal_context
from portal.web.i18n import current_language

bp = Blueprint("report_emails", __name__)


@bp.route("/reports/subscription", methods=["GET", "POST"])
@roles_required("manager")
def subscription():
    ctx, company_id = portal_context(), current_company_id()
    form = SubscriptionForm()
    if form.validate_on_submit():
        operations.change_subscription(
            ctx, user_id=current_user.id, company_id=company_id, frequency=form.frequency.data
        )
        chosen = form.frequency.data
        if chosen == OFF:
            flash(_("Report emails are off."), "success")
        else:
            flash(_("Saved: %(frequency)s.", frequency=_(FREQUENCIES[chosen]).lower()), "success")
        return redirect(url_for("report_emails.subscription"))
    frequency = queries.frequency_of_user(ctx.db, user_id=current_user.id, company_id=company_id)
    if request.method == "GET":
        form.frequency.data = frequency
    tz = report_timezone(ctx.settings)
    now = datetime.now(UTC)
    upcoming = None
    if frequency != OFF:
        current = period_for(now.astimezone(tz).date(), frequency)
        upcoming = (current, closes_text(closes_at(current, tz).astimezone(tz), current_language()))
    with ctx.db.read() as conn:
        last_test = reads.latest_status(conn, f"report-test:{current_user.id}")
    return render_template(
        "report_emails/subscription.html",
        form=form,
        test_form=TestSendForm(),
        frequency=frequency,
        frequencies=FREQUENCIES,
        upcoming=upcoming,
        test_period=last_closed(MONTHLY if frequency == OFF else frequency, now, tz),
        last_test=DELIVERY_WORDS.get(last_test) if last_test else None,
        tz=tz,
    ), (400 if form.errors else 200)


@bp.post("/reports/test-send")
@roles_required("manager")
def test_send():
    form = TestSendForm()
    if not form.validate_on_submit():
        flash(_("The form was out of date. Reload the page and try again."), "error")
        return redirect(url_for("report_emails.subscription"))
    result = operations.test_send(portal_context(), manager=current_user, request_id=form.request_id.data)
    if not result.new:
        flash(_("That test was already sent (the button was pressed twice); one email is on its way."), "success")
    elif result.queued:
        flash(
            _(
                "A test email for %(period)s is on its way to %(email)s.",
                period=period_label(result.period, current_language()),
                email=current_user.email,
            ),
            "success",
        )
    else:
        flash(
            _(
                "Your test email for %(period)s is saved and will go out shortly.",
                period=period_label(result.period, current_language()),
            ),
            "success",
        )
    return redirect(url_for("report_emails.subscription"))
