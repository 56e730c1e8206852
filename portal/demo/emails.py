"""Someone asked for a demo: a confirmation to them and a notification to the sales inbox.

Each email's input stores its `language`: the confirmation the page's the request was sent from,
the notification the sales inbox's reading language (operations.py).
"""

from __future__ import annotations

from portal.core.i18n import ENGLISH, language_of, translate
from portal.outbox import EmailIntent, Family

CONFIRMATION = Family(
    name="demo_confirmation",
    id_prefix="dmc",
    template="demo_confirmation",
    # 2: the confirmation repeats nothing the form's sender typed (see demo_emails).
    template_version=2,
    subject=lambda data: translate(language_of(data), "We received your demo request"),
)

SALES_NOTIFICATION = Family(
    name="demo_notification",
    id_prefix="dmn",
    template="demo_notification",
    template_version=1,
    subject=lambda data: translate(language_of(data), "Demo request from %(company)s", company=data["company"]),
    # Sales can answer the requester straight from their inbox.
    reply_to=lambda data, settings: data.get("requester_email"),
)

FAMILIES = (CONFIRMATION, SALES_NOTIFICATION)


def submission_subject(submission_id: int) -> str:
    """The subject_ref that ties a demo request's emails to it."""
    return f"demo_submission:{submission_id}"


def demo_emails(
    submission_id: int,
    *,
    name,
    email,
    company,
    message,
    sales_inbox,
    confirm: bool,
    language: str = ENGLISH,
    sales_language: str = ENGLISH,
) -> list[EmailIntent]:
    """The sales inbox's notification (in `sales_language`), and (`confirm`) the requester's
    confirmation (in `language`). Anyone can type any address into the form, so the confirmation
    carries none of the typed text, only the page's language: the form cannot be used to send our
    email with someone's words to a stranger."""
    subject_ref = submission_subject(submission_id)
    confirmation = EmailIntent(
        family=CONFIRMATION,
        recipient=email,
        idempotency_key=f"demo:{submission_id}:confirmation",
        data={"language": language},
        subject_ref=subject_ref,
    )
    return [confirmation] * confirm + [
        EmailIntent(
            family=SALES_NOTIFICATION,
            recipient=sales_inbox,
            idempotency_key=f"demo:{submission_id}:notification",
            data={
                "name": name,
                "company": company,
                "requester_email": email,
                "message": message,
                "language": sales_language,
            },
            subject_ref=subject_ref,
        ),
    ]
