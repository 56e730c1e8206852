"""A manager invites a colleague to volunteer in a TEEI programme."""
from portal.outbox.families.base import Family
from portal.tokens import accept_url

PROGRAMMES = {"language": "TEEI Language", "mentorship": "TEEI Mentorship"}

FAMILY = Family(
    name="invitation",
    id_prefix="inv",
    template="invitation",
    template_version=1,
    subject=lambda data: f"{data['company_name']} invites you to volunteer with {PROGRAMMES[data['programme']]}",
    prepare=lambda data, settings: {**data, "programme_name": PROGRAMMES[data["programme"]],
                                    "accept_url": accept_url(settings, data["token_nonce"])},
)
