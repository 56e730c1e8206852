"""An application's states and the decisions that move it, with the words admins read.

The words are English, marked for the catalogue (`N_`): a page shows them in its own language
(`_(label)`, `{{ _(label) }}`).
"""

from portal.core.i18n import N_

NEW, INFO_REQUESTED, APPROVED, DECLINED = "new", "info_requested", "approved", "declined"
STATES = (NEW, INFO_REQUESTED, APPROVED, DECLINED)
OPEN_STATES = (NEW, INFO_REQUESTED)
STATE_LABELS = {
    NEW: N_("New"),
    INFO_REQUESTED: N_("Information requested"),
    APPROVED: N_("Approved"),
    DECLINED: N_("Declined"),
}
# What each decision moves an application to.
DECISIONS = {"approve": APPROVED, "decline": DECLINED, "request_info": INFO_REQUESTED}
DECISION_LABELS = {
    "approve": N_("Approved"),
    "decline": N_("Declined"),
    "request_info": N_("Asked for more information"),
}

NAME_MAX = 200
EMAIL_MAX = 254
MESSAGE_MAX = 2000
NOTE_MAX = 2000
EMPLOYEES_MAX = 10_000_000


def sql_list(states) -> str:
    """States as a SQL literal list; they are constants from this module, never input."""
    assert all(state in STATES for state in states)
    return "(" + ", ".join(f"'{state}'" for state in states) + ")"
