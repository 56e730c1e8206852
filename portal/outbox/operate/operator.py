"""The engine's operator face: what the console, the suppression list, the CLI and /metrics use.

Nothing is defined here; each name is the engine's own, gathered so that the tools above the
engine reach it through one door (the floors test, tests/test_floors.py, refuses any other).
"""

from portal.outbox.ground.pause import ALL as ALL_SENDING
from portal.outbox.ground.pause import Pause, pauses
from portal.outbox.hear import suppression_comparison  # its codes: causes, offers, why a pass stopped
from portal.outbox.hear.lookup import ask_provider
from portal.outbox.hear.receipt_lookup import LookupPass, look_up_missing_receipts, unexplained_emails
from portal.outbox.hear.reconciliation import (
    FIGURES,
    LABELS,
    DayFigures,
    Reconciliation,
    past_provider_memory,
    reconcile,
)
from portal.outbox.hear.suppression_comparison import (
    Comparison,
    ComparisonPass,
    DifferenceRefused,
    OfferDone,
    act_on_difference,
    compare_suppressions,
    comparison,
)
from portal.outbox.hear.suppressions import (
    SuppressionError,
    add_suppression,
    is_suppressed,
    list_suppressions,
    remove_suppression,
)
from portal.outbox.hear.suppressions import history as suppression_history
from portal.outbox.operate import events  # an email's history: the kinds of its entries (events.KINDS)
from portal.outbox.operate.actions import (
    ACTIONS,
    BULK_LIMIT,
    REASON_MAX,
    SEND_AGAIN,
    ActionRefused,
    ActionResult,
    apply_action,
    count_eligible,
    eligible_actions,
    eligible_ids,
    is_unknown_outcome,
)
from portal.outbox.operate.events import TimelineEntry, timeline
from portal.outbox.operate.gauges import OutboxCollector
from portal.outbox.operate.listing import (
    FrozenEmail,
    OutboxFilter,
    OutboxPage,
    family_status_counts,
    frozen_email_of,
    outbox_page,
    outbox_row,
    subjects_of,
)
from portal.outbox.operate.pausing import PauseResult, ShownPause, pause_sending, resume_sending, shown_pauses
from portal.outbox.operate.retention import Kept, purge, retention_glance
from portal.outbox.send.rate_limit import rate_limit_for
from portal.outbox.write.relay import relay_pass

__all__ = [
    "ALL_SENDING",
    "Pause",
    "PauseResult",
    "ShownPause",
    "shown_pauses",
    "pause_sending",
    "pauses",
    "resume_sending",
    "Comparison",
    "ComparisonPass",
    "DifferenceRefused",
    "OfferDone",
    "act_on_difference",
    "compare_suppressions",
    "comparison",
    "FIGURES",
    "LABELS",
    "ACTIONS",
    "BULK_LIMIT",
    "REASON_MAX",
    "SEND_AGAIN",
    "ActionRefused",
    "ActionResult",
    "DayFigures",
    "FrozenEmail",
    "Kept",
    "OutboxCollector",
    "OutboxFilter",
    "OutboxPage",
    "LookupPass",
    "Reconciliation",
    "SuppressionError",
    "TimelineEntry",
    "add_suppression",
    "apply_action",
    "ask_provider",
    "count_eligible",
    "eligible_actions",
    "eligible_ids",
    "events",
    "family_status_counts",
    "frozen_email_of",
    "subjects_of",
    "is_suppressed",
    "is_unknown_outcome",
    "list_suppressions",
    "look_up_missing_receipts",
    "outbox_page",
    "outbox_row",
    "past_provider_memory",
    "purge",
    "rate_limit_for",
    "reconcile",
    "relay_pass",
    "remove_suppression",
    "retention_glance",
    "suppression_comparison",
    "suppression_history",
    "timeline",
    "unexplained_emails",
]
