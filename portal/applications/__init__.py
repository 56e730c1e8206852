"""Partner applications: a company applies; an admin approves, declines or asks for more.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.applications.emails import application_subject
from portal.applications.states import STATE_LABELS

__all__ = [
    "STATE_LABELS",
    "application_subject",
]
