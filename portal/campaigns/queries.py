"""Reading campaigns: the list, one campaign with its preview, reach, progress and outcomes.

Outcomes come from the recipients' outbox rows, whose statuses the provider's receipts advance
(delivered, bounced, complained): a row counts once, at its latest state. Which version each
recipient gets (English, Norwegian) comes from the audience before sending and from the fixed list
after it.

Words a page shows are English here, marked for the catalogue (`N_`): the page translates them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa

from portal.campaigns import audiences, emails, topics, versions
from portal.campaigns.markdown import has_raw_html, to_html, to_text
from portal.core.i18n import ENGLISH, N_, NORWEGIAN
from portal.outbox.ground import statuses
from portal.outbox.operate import reads

HELD = "held for a person"
STATUS_WORDS = {
    "draft": N_("Draft"),
    "scheduled": N_("Scheduled"),
    "sending": N_("Sending"),
    "sent": N_("Sent"),
    "cancelled": N_("Cancelled"),
}
# A cancelled campaign some of whose emails reached the provider (before the cancel, or on their way
# when it came) is not named as if the cancel had stopped it all.
PARTLY_SENT = N_("Partly sent, then cancelled")
# ...and one the cancel stopped nothing of: every email reached the provider.
SENT_BEFORE_THE_CANCEL = N_("Cancelled after every email was sent")
# The outcomes the page shows, from the recipients' outbox rows (every status is counted once).
OUTCOME_OF = {
    **{status: "waiting" for status in statuses.WAITING},
    statuses.PROCESSING: "being sent",
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
    "being sent",
    "accepted",
    "delivered",
    "bounced",
    "complained",
    "not sent",
    HELD,
    "cancelled",
)
# How the page names each outcome.
OUTCOME_LABEL = {
    "waiting": N_("Waiting"),
    "being sent": N_("Being sent"),
    "accepted": N_("Accepted"),
    "delivered": N_("Delivered"),
    "bounced": N_("Bounced"),
    "complained": N_("Complained"),
    "not sent": N_("Not sent"),
    HELD: N_("Held for a person"),
    "cancelled": N_("Cancelled"),
}
assert set(OUTCOME_LABEL) == set(OUTCOME_ORDER)
# Reached the provider: the people a campaign was "sent to".
SENT_TO = ("accepted", "delivered", "bounced", "complained")
OUTCOME_MEANING = {
    "waiting": N_("Not yet with the provider: queued, or waiting for the provider's rate limit."),
    "being sent": N_("A worker is sending it now: it may already be with the provider."),
    "accepted": N_("The provider took it; no receipt has come back yet."),
    "delivered": N_("The recipient's mail server took it (from the provider's receipt)."),
    "bounced": N_("The receiving mail server refused it (from the provider's receipt)."),
    "complained": N_("The recipient marked it as spam (from the provider's receipt)."),
    "not sent": N_("Not sent: the address is on the suppression list, or the provider refused the email."),
    HELD: N_(
        "The provider's answer was lost or the email kept failing, so it is not retried blindly: "
        "an admin decides in the outbox console whether to send it again."
    ),
    "cancelled": N_("Stopped by a cancel or an unsubscribe before it was sent."),
}
assert set(OUTCOME_MEANING) == set(OUTCOME_ORDER)


def outcomes_from(by_status: dict[str, int]) -> dict[str, int]:
    outcomes = dict.fromkeys(OUTCOME_ORDER, 0)
    for status, rows in by_status.items():
        outcomes[OUTCOME_OF[status]] += rows
    return outcomes


def sent_to(outcomes: dict[str, int]) -> int:
    return sum(outcomes[outcome] for outcome in SENT_TO)


def status_label(status: str, outcomes: dict[str, int]) -> str:
    """How the pages name a campaign's status, from its own status and its emails' outcomes."""
    if status == "cancelled" and sent_to(outcomes):
        return SENT_BEFORE_THE_CANCEL if sent_to(outcomes) == sum(outcomes.values()) else PARTLY_SENT
    return STATUS_WORDS[status]


def list_campaigns(db, language: str = ENGLISH) -> list[dict]:
    """The newest 200 campaigns; audience labels in `language` (the page's)."""
    with db.read() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT id, name, subject, audience, status, send_at, started_at, recipients, written, created_at, "
                "(subject_nb IS NOT NULL) AS has_norwegian FROM campaigns ORDER BY id DESC LIMIT 200"
            )
        ).mappings()
        listed = []
        for row in list(rows):
            outcomes = outcomes_from(reads.status_counts_for_subject(conn, emails.subject_ref(row["id"])))
            listed.append(
                {
                    **row,
                    "status_label": status_label(row["status"], outcomes),
                    "audience_label": audiences.audience_label(conn, row["audience"], language),
                    "outcomes": outcomes,
                    "sent_to": sent_to(outcomes),
                }
            )
        return listed


@dataclass(frozen=True)
class Preview:
    language: str
    subject: str
    html: str
    text: str
    raw_html: bool = False  # the body holds HTML, which the email shows as text


@dataclass(frozen=True)
class CampaignPage:
    campaign: dict
    audience_label: str
    preview_html: str  # the English version's
    preview_text: str
    reach: audiences.Reach | None  # the audience as of now (before sending starts)
    outcomes: dict[str, int]  # accepted/delivered/... from the rows' statuses (after)
    unsubscribed: int  # people who used this campaign's unsubscribe link
    # {language: its preview} of every version the campaign has, English first.
    previews: dict[str, Preview]
    # {version: how many people get it}: in the audience as of now (before), on the fixed list (after).
    version_counts: dict[str, int]
    # {bounce class: emails}: the bounced emails by their bounce's class (issue 49).
    bounce_classes: dict[str, int] = field(default_factory=dict)
    topic_label: str = ""  # the campaign's topic, in the page's language

    @property
    def has_norwegian(self) -> bool:
        return NORWEGIAN in self.previews

    @property
    def norwegian_readers(self) -> int | None:
        """How many in the audience now read Norwegian (before sending starts; None after)."""
        return None if self.reach is None else self.reach.readers_of(NORWEGIAN)

    @property
    def sent_to(self) -> int:
        return sent_to(self.outcomes)

    @property
    def status_label(self) -> str:
        return status_label(self.campaign["status"], self.outcomes)

    @property
    def can_send(self) -> bool:
        return self.campaign["status"] == "draft"

    @property
    def can_cancel(self) -> bool:
        # "sent" means every batch is written, not delivered: at the provider's rate the rest of a
        # large campaign is still waiting for minutes, and those emails can still be stopped.
        status = self.campaign["status"]
        return status in ("draft", "scheduled", "sending") or (status == "sent" and self.unsettled > 0)

    @property
    def unsettled(self) -> int:
        """Emails not yet with the provider, or on their way to it."""
        return self.outcomes["waiting"] + self.outcomes["being sent"]


# The fixed list's versions; a list fixed before versions existed (NULL) got English.
_VERSIONS_SENT = sa.text(
    "SELECT COALESCE(language, 'en') AS version, COUNT(*) FROM campaign_recipients WHERE campaign_id = :c GROUP BY 1"
)


def campaign_page(db, campaign_id: int, language: str = ENGLISH) -> CampaignPage | None:
    """One campaign as its page shows it; the audience's label in `language` (the page's)."""
    with db.read() as conn:
        row = conn.execute(sa.text("SELECT * FROM campaigns WHERE id = :id"), {"id": campaign_id}).mappings().first()
        if row is None:
            return None
        campaign = dict(row)
        started = campaign["status"] in ("sending", "sent") or campaign["recipients"] is not None
        reach = None if started else audiences.reach(conn, campaign["audience"], campaign["topic"])
        outcomes = outcomes_from(reads.status_counts_for_subject(conn, emails.subject_ref(campaign_id)))
        bounce_classes = reads.bounce_class_counts_for_subject(conn, emails.subject_ref(campaign_id))
        unsubscribed = conn.execute(
            # From every campaign, or from this campaign's topic, through its link.
            sa.text(
                "SELECT (SELECT COUNT(*) FROM campaign_unsubscribes WHERE campaign_id = :c) "
                "+ (SELECT COUNT(*) FROM campaign_topic_optouts WHERE campaign_id = :c)"
            ),
            {"c": campaign_id},
        ).scalar_one()
        label = audiences.audience_label(conn, campaign["audience"], language)
        available = versions.versions_of(campaign)
        if reach is not None:
            counts = reach.versions(available)
        else:
            counts = dict.fromkeys(available, 0)
            for version, people in conn.execute(_VERSIONS_SENT, {"c": campaign_id}).all():
                counts[version] = counts.get(version, 0) + people
    previews = {
        version.language: Preview(
            version.language,
            version.subject,
            to_html(version.body),
            to_text(version.body),
            has_raw_html(version.body),
        )
        for version in available.values()
    }
    return CampaignPage(
        campaign=campaign,
        audience_label=label,
        preview_html=previews[ENGLISH].html,
        preview_text=previews[ENGLISH].text,
        reach=reach,
        outcomes=outcomes,
        unsubscribed=unsubscribed,
        previews=previews,
        version_counts=counts,
        bounce_classes=bounce_classes,
        topic_label=topics.label(campaign["topic"], language),
    )


def audience_options(db, language: str = ENGLISH) -> list[tuple[str, str]]:
    with db.read() as conn:
        return audiences.audience_choices(conn, language)


def topic_options(db, language: str = ENGLISH) -> list[tuple[str, str]]:
    """Every topic as (code, words in `language`), in the page's order."""
    with db.read() as conn:
        return [(code, topics.label(code, language)) for code in topics.topic_codes(conn)]
