"""How the invitation list reads to a manager: each email's state in plain words.

The words stay English here (they key the badge's tone, and tests read them); they are marked for
the catalogue (`N_`) and a page shows them in its own language (templates/invitations/_badges.html).
"""

from __future__ import annotations

from dataclasses import dataclass

from portal.core.i18n import N_
from portal.core.programmes import PROGRAMMES
from portal.invitations.queries import InvitationRow
from portal.outbox.ground import statuses

NOT_SENT = N_("not sent")
MANAGER = N_("Manager")  # a manager's invitation names no programme
EMAIL_STATE_WORDS = {
    **{status: N_("queued") for status in statuses.UNSETTLED},
    statuses.SENT: N_("sent"),
    statuses.DELIVERED: N_("delivered"),
    statuses.BOUNCED: N_("bounced"),
    statuses.COMPLAINED: N_("marked as spam"),
    statuses.SUPPRESSED: N_("blocked: the address bounced before"),
    statuses.FAILED: N_("failed"),
    statuses.DEAD_LETTER: N_("needs attention"),
    statuses.CANCELLED: N_("cancelled"),
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
    name: str  # "" when only an address was pasted
    programme_name: str  # or MANAGER for a manager's invitation (a page translates it)
    role: str
    state: str  # open, accepted, expired, revoked
    email_state: str  # in a manager's words (English, marked: a page translates it)
    email_tone: str  # ok, bad, warn or "" for the badge's colour
    created_at: str
    can_resend: bool
    can_revoke: bool


def invitation_view(row: InvitationRow) -> InvitationView:
    words = EMAIL_STATE_WORDS.get(row.email_status, NOT_SENT)
    settled = row.email_status is None or row.email_status in statuses.SETTLED
    return InvitationView(
        id=row.id,
        email=row.email,
        name=row.name or "",
        programme_name=MANAGER if row.role == "manager" else PROGRAMMES.get(row.programme, ""),
        role=row.role,
        state=row.state,
        email_state=words,
        email_tone=EMAIL_STATE_TONE.get(words, ""),
        created_at=row.created_at,
        # A resend waits until the latest email has settled, so two are never in flight at once.
        # A manager's invitation may be renewed once expired or revoked (a new link), a volunteer's
        # is invited again instead.
        can_resend=settled and (row.state == "open" or (row.role == "manager" and row.state in ("expired", "revoked"))),
        can_revoke=row.state in ("open", "expired"),
    )
