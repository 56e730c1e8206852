"""SCIM 2.0 provisioning from a company's directory (issue 48): tokens, and the company's people as Users.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.scim.operations import create_token, revoke_tokens

__all__ = [
    "create_token",
    "revoke_tokens",
]
