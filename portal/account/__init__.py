"""A person's own account: changing their name and password, and resetting a forgotten password.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.account.operations import set_language

__all__ = ["set_language"]
