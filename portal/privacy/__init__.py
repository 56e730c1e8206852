"""A person's data: what the portal holds about an email address, as a download, and its erasure
(GDPR articles 15 and 17). Admins act for anyone; a signed-in person downloads their own, and a
volunteer erases their own account.

Other areas use this one only through the names below (its face; tests/test_floors.py): the privacy
notice states the retention periods as configured.
"""

from portal.privacy.retention import rules as retention_rules

__all__ = ["retention_rules"]
