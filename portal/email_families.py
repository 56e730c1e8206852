"""Every email family the portal sends: the one list the engine is given.

Each area declares its families in its own `emails.py`; add a new area's tuple here.
"""

from portal.account import emails as account_emails
from portal.applications import emails as application_emails
from portal.campaigns import emails as campaign_emails
from portal.demo import emails as demo_emails
from portal.invitations import emails as invitation_emails
from portal.notices import emails as notice_emails
from portal.outbox import FamilyRegistry
from portal.report_emails import emails as report_emails

FAMILIES = FamilyRegistry(
    (
        *invitation_emails.FAMILIES,
        *application_emails.FAMILIES,
        *demo_emails.FAMILIES,
        *notice_emails.FAMILIES,
        *report_emails.FAMILIES,
        *account_emails.FAMILIES,
        *campaign_emails.FAMILIES,
    )
)
