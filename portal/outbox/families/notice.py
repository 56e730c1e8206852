"""A plain notice from the portal team (operator emails, e.g. sent from a Flask shell)."""
from portal.outbox.families.base import Family

FAMILY = Family(
    name="notice",
    id_prefix="ntc",
    template="notice",
    template_version=1,
    subject=lambda data: data["subject"],
)
