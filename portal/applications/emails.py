"""A company applied to become a partner: the confirmation, and the admin's decision.

Each email's input stores its `language` (operations.py chooses it); its subject and body are
written in it.
"""

from __future__ import annotations

from portal.core.i18n import ENGLISH, N_, language_of, translate
from portal.invitations import accept_url
from portal.outbox import EmailIntent, Family

DECISION_SUBJECTS = {
    "approve": N_("Welcome to TEEI: your partner application is approved"),
    "decline": N_("About your TEEI partner application"),
    "request_info": N_("We need a little more information about your application"),
}

# Whoever fills in the public form chooses the address, so the confirmation carries nothing typed
# into it (no name, company or number): only that an application named this address.
RECEIVED = Family(
    name="application_received",
    id_prefix="apr",
    template="application_received",
    template_version=3,  # 2: no possessive after the company name; 3: nothing the applicant typed
    subject=lambda data: translate(language_of(data), "We received your partner application"),
)

DECISION = Family(
    name="application_decision",
    id_prefix="apd",
    template="application_decision",
    template_version=4,  # 3: no possessive after the company name; 4: the text part opens with the heading
    subject=lambda data: translate(language_of(data), DECISION_SUBJECTS[data["decision"]]),
    # "Please reply to this email" must reach the partnerships team, not the no-reply sender.
    reply_to=lambda data, settings: settings.sales_inbox,
    # An approval invites the contact as the company's first manager; the link is built here.
    prepare=lambda data, settings: {
        **data,
        "accept_url": accept_url(settings, data["token_nonce"]) if data.get("token_nonce") else None,
    },
)

# TEEI's applications inbox hears of each new application, with a link to decide it.
NOTIFICATION = Family(
    name="application_notification",
    id_prefix="apn",
    template="application_notification",
    template_version=1,
    subject=lambda data: translate(
        language_of(data), "New partner application from %(company)s", company=data["company_name"]
    ),
    # The team can write to the applicant straight from its inbox.
    reply_to=lambda data, settings: data.get("contact_email"),
    prepare=lambda data, settings: {
        **data,
        "review_url": f"{settings.public_base_url}/admin/applications/{data['application_id']}",
    },
)

FAMILIES = (RECEIVED, DECISION, NOTIFICATION)


def application_subject(application_id: int) -> str:
    return f"application:{application_id}"


def received_key(application_id: int) -> str:
    return f"application:{application_id}:received"


def received_email(application_id: int, *, contact_email, language: str = ENGLISH) -> EmailIntent:
    """The applicant's confirmation: that an application named this address, in `language`."""
    return EmailIntent(
        family=RECEIVED,
        recipient=contact_email,
        idempotency_key=received_key(application_id),
        data={"language": language},
        subject_ref=application_subject(application_id),
    )


def notification_email(
    application_id: int,
    *,
    inbox,
    contact_email,
    contact_name,
    company_name,
    employee_count,
    message,
    language: str = ENGLISH,
) -> EmailIntent:
    return EmailIntent(
        family=NOTIFICATION,
        recipient=inbox,
        idempotency_key=f"application:{application_id}:notification",
        data={
            "application_id": application_id,
            "contact_name": contact_name,
            "contact_email": contact_email,
            "company_name": company_name,
            "employee_count": employee_count,
            "message": message,
            "language": language,
        },
        subject_ref=application_subject(application_id),
    )


def decision_email(
    application, sequence: int, *, decision: str, note: str, token_nonce: str | None, language: str = ENGLISH
) -> EmailIntent:
    """The decision, and an approval's invitation to create the first manager account, in `language`."""
    data = {
        "decision": decision,
        "note": note,
        "contact_name": application["contact_name"],
        "company_name": application["company_name"],
        "language": language,
    }
    if token_nonce:
        data["token_nonce"] = token_nonce
    return EmailIntent(
        family=DECISION,
        recipient=application["contact_email"],
        idempotency_key=f"application:{application['id']}:decision:{sequence}",
        data=data,
        subject_ref=application_subject(application["id"]),
    )
