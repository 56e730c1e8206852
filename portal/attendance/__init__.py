"""Attendance from the programme platforms: the signed API, imports, and the membership history
that decides which company a session's hours belong to.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.attendance.memberships import account_created, attach_unmatched_sessions, end_membership, start_membership

__all__ = [
    "account_created",
    "attach_unmatched_sessions",
    "end_membership",
    "start_membership",
]
