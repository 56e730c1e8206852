"""Reading campaigns: the list, one campaign with its preview, reach, progress and outcomes.

Outcomes come from the recipients' outbox rows, whose statuses the provider's receipts advance
(delivered, bounced, complained): a row counts once, at its latest state.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from portal.campaigns import audiences, emails
from portal.campaigns.markdown import to_html, to_text
from portal.outbox import reads, statuses

HELD = "held for a person"
STATUS_WORDS = {
    "draft": "Draft",
    "scheduled": "Scheduled",
    "sending": "Sending",
    "sent": "Sent",
    "cancelled": "Cancelled",
}
# The outcomes the page shows, from the recipients' outbox rows (every status is counted once).
OUTCOME_OF = {
    **{status: "waiting" for status in statuses.UNSETTLED},
    statuses.SENT: "accepted",
    statuses.DELIVERED: "delivered",
    statuses.BOUNCED: "bounced",
    statuses.COMPLAINED: "complained",
    statuses.SUPPRESSED: "not sent",
    statuses.FAILED: "not sent",
    statuses.DEAD_LETTER: HELD,
    statuses.CANCELLED: "cancelled",
}
assert set(OUTCOME_OF) == set(statuses.ALL)
OUTCOME_ORDER = (
    "waiting",
    "accepted",
    "delivered",
    "bounced",
    "complained",
    "not sent",
    HELD,
    "cancelled",
)
# Reached the provider: the people a campaign was "sent to".
SENT_TO = ("accepted", "delivered", "bounced", "complained")
OUTCOME_MEANING = {
    "waiting": "Not yet with the provider: queued, or waiting for the provider's rate limit.",
    "accepted": "The provider took it; no receipt has come back yet.",
    "delivered": "The recipient's mail server took it (from the provider's receipt).",
    "bounced": "The receiving mail server refused it (from the provider's receipt).",
    "complained": "The recipient marked it as spam (from the provider's receipt).",
    "not sent": "Not sent: the address is on the suppression list, or the provider refused the email.",
    HELD: (
        "The provider's answer was lost or the email kept failing, so it is not retried blindly: "
        "an admin decides in the outbox console whether to send it again."
    ),
    "cancelled": "Stopped by a cancel or an unsubscribe before it was sent.",
}
assert set(OUTCOME_MEANING) == set(OUTCOME_ORDER)


def outcomes_from(by_status: dict[str, int]) -> dict[str, int]:
    outcomes = dict.fromkeys(OUTCOME_ORDER, 0)
    for status, rows in by_status.items():
        outcomes[OUTCOME_OF[status]] += rows
    return outcomes


def sent_to(outcomes: dict[str, int]) -> int:
    return sum(outcomes[outcome] for outcome in SENT_TO)


def list_campaigns(db) -> list[dict]:
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT id, name, subject, audience, status, send_at, started_at, recipients, written, created_at "
                "FROM campaigns ORDER BY id DESC LIMIT 200"
            )
        ).mappings()
        listed = []
        for row in list(rows):
            outcomes = outcomes_from(reads.status_counts_for_subject(conn, emails.subject_ref(row["id"])))
            listed.append(
                {
                    **row,
                    "status_label": STATUS_WORDS[row["status"]],
                    "audience_label": audiences.audience_label(conn, row["audience"]),
                    "outcomes": outcomes,
                    "sent_to": sent_to(outcomes),
                }
            )
        return listed


@dataclass(frozen=True)
class CampaignPage:
    campaign: dict
    audience_label: str
    preview_html: str
    preview_text: str
    reach: audiences.Reach | None  # the audience as of now (before sending starts)
    outcomes: dict[str, int]  # accepted/delivered/... from the rows' statuses (after)
    unsubscribed: int  # people who used this campaign's unsubscribe link

    @property
    def sent_to(self) -> int:
        return sent_to(self.outcomes)

    @property
    def status_label(self) -> str:
        return STATUS_WORDS[self.campaign["status"]]

    @property
    def can_send(self) -> bool:
        return self.campaign["status"] == "draft"

    @property
    def can_cancel(self) -> bool:
        # "sent" means every batch is written, not delivered: at the provider's rate the rest of a
        # large campaign is still waiting for minutes, and those emails can still be stopped.
        status = self.campaign["status"]
        return status in ("draft", "scheduled", "sending") or (status == "sent" and self.outcomes["waiting"] > 0)


def campaign_page(db, campaign_id: int) -> CampaignPage | None:
    with db.read() as conn:
        row = conn.execute(sa.text("SELECT * FROM campaigns WHERE id = :id"), {"id": campaign_id}).mappings().first()
        if row is None:
            return None
        campaign = dict(row)
        started = campaign["status"] in ("sending", "sent") or campaign["recipients"] is not None
        reach = None if started else audiences.reach(conn, campaign["audience"])
        outcomes = outcomes_from(reads.status_counts_for_subject(conn, emails.subject_ref(campaign_id)))
        unsubscribed = conn.execute(
            sa.text("SELECT COUNT(*) FROM campaign_unsubscribes WHERE campaign_id = :c"), {"c": campaign_id}
        ).scalar_one()
        label = audiences.audience_label(conn, campaign["audience"])
    return CampaignPage(
        campaign=campaign,
        audience_label=label,
        preview_html=to_html(campaign["body"]),
        preview_text=to_text(campaign["body"]),
        reach=reach,
        outcomes=outcomes,
        unsubscribed=unsubscribed,
    )


def audience_options(db) -> list[tuple[str, str]]:
    with db.read() as conn:
        return audiences.audience_choices(conn)
