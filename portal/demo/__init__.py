"""Demo requests: anyone asks for a demo; the requester and the sales inbox are emailed.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.demo.emails import submission_subject
from portal.demo.queries import demo_request_page

__all__ = [
    "demo_request_page",
    "submission_subject",
]
