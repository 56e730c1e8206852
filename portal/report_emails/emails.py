"""The report email: a period's headline figures, a link to the report, and its PDF as the one attachment.

Scheduled runs, backfills and test sends all build their intents here and go through the outbox
like every other email. The retry policy lives with the family: a report may wait hours (the
manager reads it that day, not that minute), while the total wait stays inside the provider's 24-hour
idempotency window, so a retry after an unanswered attempt is still deduplicated by the provider.
"""

from __future__ import annotations

import base64
from urllib.parse import urlencode

from portal.core.i18n import N_, language_of, translate
from portal.outbox import BULK_EMAIL_QUEUE, Attachment, EmailIntent, Family, RetryPolicy
from portal.outbox.ground import statuses
from portal.report_emails.content import headline, period_of, report_from_input
from portal.reports import filing_pdf, name_label, period_label, verify_url

# 5 min, 10, 20 … capped at 4 h: the nine waits add up to about 17 hours (< 24 h), then the dead-letter queue.
REPORT_RETRY = RetryPolicy(base_seconds=300, cap_seconds=4 * 3600, max_attempts=10)


def report_subject(data: dict) -> str:
    """In the manager's language, stored with the email (English for emails written before languages)."""
    language = language_of(data)
    values = {"period": period_label(period_of(data), language), "company": data["company_name"]}
    if data["kind"] == "test":
        return translate(language, "[Test] Volunteering report for %(period)s: %(company)s", **values)
    return translate(language, "Volunteering report for %(period)s: %(company)s", **values)


def report_url(data: dict, base_url: str) -> str:
    period = data["period"]
    return f"{base_url}/reports?{urlencode({'from': period['start'], 'to': period['end']})}"


def _prepare(data: dict, settings) -> dict:
    language = language_of(data)
    return {
        **data,
        "headline": headline(data),
        "period_label": period_label(period_of(data), language),
        "closed_year_label": name_label(data["closed"]["year_label"], language) if data.get("closed") else None,
        "report_url": report_url(data, settings.public_base_url),
        "verify_url": verify_url(settings.public_base_url, data["report_id"]),
    }


def report_pdf(data: dict, settings) -> Attachment:
    """The filing PDF, in the language the email is written in."""
    body = filing_pdf(
        report_from_input(data), language_of(data), verify_url(settings.public_base_url, data["report_id"])
    )
    name = f"teei-report-{data['period']['key']}.pdf"
    return Attachment(name, base64.b64encode(body).decode("ascii"), "application/pdf")


REPORT = Family(
    name="report",
    id_prefix="rep",
    template="report",
    # 2: the dominance rule stated; each programme on a line of its own in the text part. 3: the verify link.
    # 4: the year's goal and the same period last year.
    template_version=4,
    subject=report_subject,
    prepare=_prepare,
    attachment=report_pdf,
    retry=REPORT_RETRY,
    # A month's run is one email per subscribed manager, each its own request (a PDF: Resend's batch
    # endpoint takes no attachments): 2,000 companies are 400 s at 5 requests a second. On the
    # transactional queue an invitation committed meanwhile would wait behind all of them; workers
    # take the bulk queue only when the transactional one is empty.
    queue=BULK_EMAIL_QUEUE,
)

FAMILIES = (REPORT,)


def run_email(
    shared: dict, *, company_id: int, period_key: str, run_number: int, manager, language: str
) -> EmailIntent:
    """One subscribed manager's email of a scheduled run or a backfill; a forced backfill has a new run
    number. `language`: the manager's (`reading_language`), read in the write that adds the email."""
    return EmailIntent(
        family=REPORT,
        recipient=manager.email,
        idempotency_key=f"report:{company_id}:{period_key}:run:{run_number}:user:{manager.id}",
        subject_ref=f"report-run:{company_id}:{period_key}",
        data={**shared, "recipient_name": manager.name, "language": language},
    )


def test_email(shared: dict, *, manager, request_id: str, language: str) -> EmailIntent:
    """A manager's test send: keyed by the form's request ID, so a double click is one email. In the
    manager's language, as the scheduled emails are (`reading_language`)."""
    return EmailIntent(
        family=REPORT,
        recipient=manager.email,
        idempotency_key=f"report-test:{manager.id}:{request_id}",
        subject_ref=f"report-test:{manager.id}",
        data={**shared, "recipient_name": manager.name, "language": language},
    )


# Where a manager's last test send stands, in their words (every status covered); translated where shown.
DELIVERY_WORDS = {
    **{status: N_("on its way") for status in statuses.UNSETTLED},
    statuses.SENT: N_("sent"),
    statuses.DELIVERED: N_("delivered"),
    statuses.BOUNCED: N_("bounced"),
    statuses.COMPLAINED: N_("marked as spam"),
    statuses.SUPPRESSED: N_("not sent: your address bounced before"),
    statuses.FAILED: N_("failed"),
    statuses.DEAD_LETTER: N_("held for an administrator to check"),
    statuses.CANCELLED: N_("cancelled before it was sent"),
}
assert set(DELIVERY_WORDS) == set(statuses.ALL)
