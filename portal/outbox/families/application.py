"""A company applied to become a partner: the confirmation, and the admin's decision."""
from portal.outbox.families.base import Family
from portal.tokens import accept_url

DECISION_SUBJECTS = {
    "approve": "Welcome to TEEI: your partner application is approved",
    "decline": "About your TEEI partner application",
    "request_info": "We need a little more information about your application",
}

RECEIVED = Family(
    name="application_received",
    id_prefix="apr",
    template="application_received",
    template_version=1,
    subject=lambda data: "We received your partner application",
)

DECISION = Family(
    name="application_decision",
    id_prefix="apd",
    template="application_decision",
    template_version=2,
    subject=lambda data: DECISION_SUBJECTS[data["decision"]],
    # "Please reply to this email" must reach the partnerships team, not the no-reply sender.
    reply_to=lambda data, settings: settings.sales_inbox,
    # An approval invites the contact as the company's first manager; the link is built here.
    prepare=lambda data, settings: {
        **data, "accept_url": accept_url(settings, data["token_nonce"]) if data.get("token_nonce") else None},
)
