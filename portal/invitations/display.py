"""How the invitation list reads to a manager: each email's state in plain words."""

from __future__ import annotations

from dataclasses import dataclass

from portal.invitations.queries import InvitationRow
from portal.outbox import statuses
from portal.programmes import PROGRAMMES

NOT_SENT = "not sent"
EMAIL_STATE_WORDS = {
    **{status: "queued" for status in statuses.UNSETTLED},
    statuses.SENT: "sent",
    statuses.DELIVERED: "delivered",
    statuses.BOUNCED: "bounced",
    statuses.COMPLAINED: "marked as spam",
    statuses.SUPPRESSED: "blocked: the address bounced before",
    statuses.FAILED: "failed",
    statuses.DEAD_LETTER: "needs attention",
}
assert set(EMAIL_STATE_WORDS) == set(statuses.ALL)
EMAIL_STATE_TONE = {
    "delivered": "ok",
    "sent": "ok",
    "bounced": "bad",
    "marked as spam": "bad",
    "failed": "bad",
    "blocked: the address bounced before": "bad",
    "needs attention": "warn",
}


@dataclass(frozen=True)
class InvitationView:
    id: int
    email: str
    programme_name: str
    state: str  # open, accepted, expired
    email_state: str  # in a manager's words
    email_tone: str  # ok, bad, warn or "" for the badge's colour
    created_at: str
    can_resend: bool


def invitation_view(row: InvitationRow) -> InvitationView:
    words = EMAIL_STATE_WORDS.get(row.email_status, NOT_SENT)
    return InvitationView(
        id=row.id,
        email=row.email,
        programme_name=PROGRAMMES.get(row.programme, ""),
        state=row.state,
        email_state=words,
        email_tone=EMAIL_STATE_TONE.get(words, ""),
        created_at=row.created_at,
        # A resend waits until the latest email has settled, so two are never in flight at once.
        can_resend=row.state == "open" and (row.email_status is None or row.email_status in statuses.SETTLED),
    )
