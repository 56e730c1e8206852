"""The registry of email families, and the recogniser that maps an outbox ID to its family.

Every ID the portal builds must be recognised here (a property test checks each family), or the
consumer would mark its row failed as `outbox_id_unclaimed`.
"""
from __future__ import annotations

import re

from portal.outbox.families import application, demo_request, invitation, notice
from portal.outbox.families.base import Family

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        invitation.FAMILY,
        demo_request.CONFIRMATION,
        demo_request.SALES_NOTIFICATION,
        application.RECEIVED,
        application.DECISION,
        notice.FAMILY,
    )
}
_BY_PREFIX = {family.id_prefix: family for family in FAMILIES.values()}
assert len(_BY_PREFIX) == len(FAMILIES), "two families share an ID prefix"
OUTBOX_ID = re.compile(r"^([a-z]{3})_([0-9a-f]{32})$")


def family_for_outbox_id(outbox_id: str) -> Family | None:
    match = OUTBOX_ID.match(outbox_id)
    return _BY_PREFIX.get(match.group(1)) if match else None


def get_family(name: str) -> Family:
    return FAMILIES[name]
