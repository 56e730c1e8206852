"""The one place that knows the outbox statuses, which may change into which, and the reasons."""

import re

from portal.outbox.ground.bounce_classes import CLASSES as BOUNCE_CLASSES
from portal.outbox.ground.bounce_classes import is_soft as is_soft_bounce

# The statuses face: what pages and the console name (portal.outbox.FACES).
__all__ = [
    "ALL",
    "BOUNCE_CLASSES",
    "BOUNCED",
    "CANCELLED",
    "COMPLAINED",
    "DEAD_LETTER",
    "DELIVERED",
    "DELIVERY_EXHAUSTED",
    "ENQUEUED",
    "FAILED",
    "PENDING",
    "PROCESSING",
    "REQUEST_ACCEPTED",
    "RETRY",
    "SENT",
    "SETTLED",
    "SUPPRESSED",
    "UNKNOWN_OUTCOME",
    "UNSETTLED",
    "WAITING",
    "is_soft_bounce",
]

PENDING = "pending"  # committed; publication not recorded
ENQUEUED = "enqueued"  # its message is published (right after the commit that wrote it, or by the relay)
PROCESSING = "processing"  # claimed by one delivery until claim_expires_at
RETRY = "retry"  # waiting for next_attempt_at
SENT = "sent"  # accepted by the provider
DELIVERED = "delivered"
BOUNCED = "bounced"
COMPLAINED = "complained"
FAILED = "failed"  # final: nothing was sent
SUPPRESSED = "suppressed"  # final: the address is on the suppression list; nothing was sent
DEAD_LETTER = "dead_letter"  # final until a person decides; the reason is in last_error
CANCELLED = "cancelled"  # final: a person or a campaign cancel stopped it before any attempt

ALL = (
    PENDING,
    ENQUEUED,
    PROCESSING,
    RETRY,
    SENT,
    DELIVERED,
    BOUNCED,
    COMPLAINED,
    FAILED,
    SUPPRESSED,
    DEAD_LETTER,
    CANCELLED,
)
# A waiting row may be claimed; publication may only move rows among these.
WAITING = (PENDING, ENQUEUED, RETRY)
UNSETTLED = WAITING + (PROCESSING,)
SETTLED = tuple(s for s in ALL if s not in UNSETTLED)

# Which status a provider receipt may replace with which:
#   sent < delivered < bounced = complained = failed = suppressed.
# Each of the last four is the last word on an email (the provider's email.failed and
# email.suppressed say it never left), so none outranks another and time decides between them.
RECEIPT_RANK = {SENT: 1, DELIVERED: 2, BOUNCED: 3, COMPLAINED: 3, FAILED: 3, SUPPRESSED: 3}
# Rows a receipt may move once they carry the provider's message ID. A receipt may make a row
# failed or suppressed, but nothing moves one out of those: nothing was sent.
RECEIPT_STATUSES = (SENT, DELIVERED, BOUNCED, COMPLAINED)

# Reasons written to last_error.
UNKNOWN_OUTCOME = "unknown_outcome"
OUTBOX_ID_UNCLAIMED = "outbox_id_unclaimed"
DELIVERY_EXHAUSTED = "delivery_exhausted"
RECIPIENT_SUPPRESSED = "recipient_suppressed"  # the reason of a row that settled as suppressed
# Reasons written to last_error by an operator's action (the operator's own words are in the event).
CANCELLED_BY_OPERATOR = "cancelled_by_operator"
CONFIRMED_BY_OPERATOR = "confirmed_by_operator"
SENT_AGAIN = "sent_again"  # an operator wrote a new email for this one (actions.py)
# The batch request log's answer to a request the provider took (the others are the provider's
# status and reason code): the whole list, one message ID for each of the request's `size` members
# (send/batch.py refuses an answer with any other number).
REQUEST_ACCEPTED = "accepted"
# What a delivery decides, never written: its claim is no longer its own (it expired, and may have
# been taken over), so it must not make its request, and it changes nothing.
CLAIM_LOST = "claim_lost"
# A delivery an operator's pause stopped before its request (ground/pause.py): the row's claim is
# given back (no attempt used) and its message waits, parked, for the resume. Written to last_error.
SENDING_PAUSED = "sending_paused"

# A row that may have gone out with no answer, and that no person has settled yet (by confirming
# it, or sending it again): a condition on email_outbox's own columns.
OUTCOME_UNKNOWN = (
    f"status = '{DEAD_LETTER}' AND outcome_unknown = 1 AND provider_message_id IS NULL"
    f" AND COALESCE(last_error, '') != '{SENT_AGAIN}'"
)


def among_named(condition: str, column: str = "id", names: str = ":ids") -> str:
    """`column IN (the JSON list bound to names) AND condition`, for statements that name their rows.

    The condition's own `status` is written `+status`, which SQLite reads as the same value but
    cannot look up in an index: asked for both, its planner takes a status index over the list and
    walks every waiting row of the outbox to find the few it was given (a publication during a
    100,000-row backlog visited the whole backlog)."""
    return f"{column} IN (SELECT value FROM json_each({names})) AND " + re.sub(
        r"(?<![\w.+])status\b", "+status", condition
    )


def sql_list(statuses) -> str:
    """Statuses as a SQL literal list; they are constants from this module, never input."""
    assert all(s in ALL for s in statuses)
    return "(" + ", ".join(f"'{s}'" for s in statuses) + ")"
