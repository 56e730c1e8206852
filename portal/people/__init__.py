"""The people of a partner company: colleagues who left are deactivated (and reactivated when they
come back), a volunteer is made a manager, a second manager is invited.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.people.operations import PeopleError, deactivate_colleague, make_manager, reactivate_colleague
from portal.people.queries import people_page

__all__ = [
    "PeopleError",
    "deactivate_colleague",
    "make_manager",
    "people_page",
    "reactivate_colleague",
]
