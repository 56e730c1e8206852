"""Someone asked for a demo: a confirmation to them and a notification to the sales inbox."""
from portal.outbox.families.base import Family

CONFIRMATION = Family(
    name="demo_confirmation",
    id_prefix="dmc",
    template="demo_confirmation",
    template_version=1,
    subject=lambda data: "We received your demo request",
)

SALES_NOTIFICATION = Family(
    name="demo_notification",
    id_prefix="dmn",
    template="demo_notification",
    template_version=1,
    subject=lambda data: f"Demo request from {data['company']}",
    # Sales can answer the requester straight from their inbox.
    reply_to=lambda data, settings: data.get("requester_email"),
)
