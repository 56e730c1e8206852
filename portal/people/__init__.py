"""The people of a partner company: colleagues who left are deactivated, a second manager is invited.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.people.operations import PeopleError, deactivate_colleague, reactivate_colleague
from portal.people.queries import people_page

__all__ = [
    "PeopleError",
    "deactivate_colleague",
    "people_page",
    "reactivate_colleague",
]
