"""Sign-in with a company's own OpenID Connect provider (issue 48): its settings, the sign-in, and
the company's identity events.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.sso.operations import NO_PASSWORD, record_event
from portal.sso.queries import directory_creates, join_programme, password_sign_in_allowed, provider_for_address

__all__ = [
    "NO_PASSWORD",
    "directory_creates",
    "join_programme",
    "password_sign_in_allowed",
    "provider_for_address",
    "record_event",
]
