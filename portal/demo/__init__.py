"""Demo requests: anyone asks for a demo; the requester and the sales inbox are emailed.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.demo.emails import submission_subject
from portal.demo.operations import STATUS_LABELS
from portal.demo.queries import demo_request_page, status_counts

__all__ = [
    "STATUS_LABELS",
    "demo_request_page",
    "status_counts",
    "submission_subject",
]
