"""A manager invites a colleague to volunteer in a TEEI programme."""
from portal.outbox.families.base import Family

PROGRAMMES = {"language": "TEEI Language", "mentorship": "TEEI Mentorship"}

FAMILY = Family(
    name="invitation",
    id_prefix="inv",
    template="invitation",
    template_version=1,
    subject=lambda data: f"{data['company_name']} invites you to volunteer with {PROGRAMMES[data['programme']]}",
)
