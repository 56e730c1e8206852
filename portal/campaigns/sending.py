"""Writing a campaign's outbox rows: the recipient list fixed at the start, then batch by batch.

Starting a campaign writes its recipient list (`campaign_recipients`, positions 0..n-1) in one
transaction: whoever is in the audience then, without the unsubscribed and the suppressed, each
with the version they get (their reading language's, else English: versions.py), read in the same
query. After that nobody joins the list; someone who unsubscribes meanwhile keeps their place but
gets no email (their unsent row is cancelled, and a later batch writes none for them).

Each batch is one `write_then_publish`: the outbox rows for the next positions and the campaign's
`written` counter commit together, and the rows are published after the commit. The counter
moves only from the value the batch read, so a crash before a commit leaves nothing of that
batch, a crash after it leaves the counter past it, and the next pass carries on from there: no
duplicate (one key per campaign and person besides) and no gap. The worker runs the pass
(`campaign_task`) every CAMPAIGN_PASS_INTERVAL_SECONDS under a Redis lock, which also starts
scheduled campaigns once their time comes.
"""

from __future__ import annotations

import logging
from datetime import datetime

import sqlalchemy as sa

from portal.campaigns import audiences, emails, versions
from portal.core import clock
from portal.core.i18n import choose_language
from portal.outbox import PeriodicTask, write_then_publish

log = logging.getLogger(__name__)
BATCH_SIZE = 500


def start_campaign(conn: sa.Connection, campaign_id: int) -> int | None:
    """Inside the caller's transaction: fix the recipient list of a `scheduled` campaign and mark
    it `sending`; returns the number of recipients (None if it was not scheduled)."""
    campaign = conn.execute(sa.text("SELECT * FROM campaigns WHERE id = :id"), {"id": campaign_id}).first()
    if campaign is None or campaign.status != "scheduled":
        return None
    available = versions.versions_of(campaign._mapping)
    reach = audiences.reach(conn, campaign.audience, campaign.topic)
    if reach.people:
        conn.execute(
            sa.text(
                "INSERT INTO campaign_recipients (campaign_id, position, user_id, email, name, language) "
                "VALUES (:c, :p, :u, :e, :n, :l)"
            ),
            [
                {
                    "c": campaign_id,
                    "p": position,
                    "u": person.user_id,
                    "e": person.email,
                    "n": person.name,
                    "l": versions.version_for(person.language, available),
                }
                for position, person in enumerate(reach.people)
            ],
        )
    now = clock.now_iso()
    conn.execute(
        sa.text(
            """
            UPDATE campaigns SET status = CASE WHEN :n = 0 THEN 'sent' ELSE 'sending' END,
                recipients = :n, left_out_suppressed = :s, left_out_unsubscribed = :x, started_at = :now,
                finished_at = CASE WHEN :n = 0 THEN :now END, updated_at = :now
            WHERE id = :id AND status = 'scheduled'
            """
        ),
        {"n": reach.recipients, "s": reach.suppressed, "x": reach.unsubscribed, "now": now, "id": campaign_id},
    )
    return reach.recipients


# Someone who unsubscribed (from every campaign or from this campaign's topic), or whose account was deactivated, after the list was fixed keeps their
# position but gets no row. The version is the one fixed with the list; a list fixed before versions
# existed (`language` NULL) reads the person's language now.
_NEXT_RECIPIENTS = sa.text(
    """
    SELECT r.user_id, r.email, r.name, r.language AS version,
           u.language, c.language AS company_language,
           (x.user_id IS NOT NULL OR t.user_id IS NOT NULL OR u.deactivated_at IS NOT NULL) AS left_out
    FROM campaign_recipients r LEFT JOIN campaign_unsubscribes x ON x.user_id = r.user_id
         LEFT JOIN campaign_topic_optouts t ON t.user_id = r.user_id AND t.topic = :topic
         LEFT JOIN users u ON u.id = r.user_id LEFT JOIN companies c ON c.id = u.company_id
    WHERE r.campaign_id = :c AND r.position >= :from ORDER BY r.position LIMIT :limit
    """
)
_ADVANCE = sa.text(
    """
    UPDATE campaigns SET written = :to, updated_at = :now,
        status = CASE WHEN :to >= recipients THEN 'sent' ELSE status END,
        finished_at = CASE WHEN :to >= recipients THEN :now END
    WHERE id = :id AND status = 'sending' AND written = :from
    """
)


class BatchRaced(RuntimeError):
    """Another writer moved the campaign first: this batch rolls back and writes nothing."""


def write_next_batch(ctx, campaign_id: int, batch_size: int = BATCH_SIZE) -> int:
    """One batch of rows and the campaign's progress, in one transaction, published after it;
    returns how many positions of the list it covered (0 once the campaign is written out,
    cancelled or gone)."""
    with write_then_publish(ctx, now=clock.utcnow()) as work:
        campaign = work.conn.execute(sa.text("SELECT * FROM campaigns WHERE id = :id"), {"id": campaign_id}).first()
        if campaign is None or campaign.status != "sending":
            return 0
        available = versions.versions_of(campaign._mapping)
        shared = {language: emails.campaign_input(campaign._mapping, language) for language in available}
        people = work.conn.execute(
            _NEXT_RECIPIENTS,
            {"c": campaign_id, "from": campaign.written, "limit": batch_size, "topic": campaign.topic},
        ).all()
        work.add(
            *(
                emails.recipient_email(shared[_version(p, available)], user_id=p.user_id, email=p.email, name=p.name)
                for p in people
                if not p.left_out
            )
        )
        advanced = work.conn.execute(
            _ADVANCE,
            {
                "to": campaign.written + len(people),
                "now": clock.iso(work.now),
                "id": campaign_id,
                "from": campaign.written,
            },
        ).rowcount
        if advanced != 1:
            raise BatchRaced(f"campaign {campaign_id} moved while a batch was written")
    return len(people)


def _version(person, available) -> str:
    """The version a listed person gets: the one fixed with the list, else their reading language's."""
    if person.version in available:
        return person.version
    return versions.version_for(choose_language(person.language, (), person.company_language), available)


def campaign_pass(ctx, *, now: datetime | None = None, batch_size: int = BATCH_SIZE) -> int:
    """Start every scheduled campaign that is due, then write every sending one out; returns rows written."""
    due_by = clock.iso(now or clock.utcnow())
    with ctx.db.read() as conn:
        due = (
            conn.execute(
                sa.text("SELECT id FROM campaigns WHERE status = 'scheduled' AND send_at <= :now ORDER BY send_at, id"),
                {"now": due_by},
            )
            .scalars()
            .all()
        )
    for campaign_id in due:
        with ctx.db.write() as conn:
            start_campaign(conn, campaign_id)
    with ctx.db.read() as conn:
        sending = conn.execute(sa.text("SELECT id FROM campaigns WHERE status = 'sending' ORDER BY id")).scalars().all()
    written = 0
    for campaign_id in sending:
        while True:
            batch = write_next_batch(ctx, campaign_id, batch_size)
            written += batch
            if not batch:
                break
    return written


def campaign_task(settings) -> PeriodicTask:
    """The pass as the worker runs it, one worker at a time."""

    def one_pass(ctx, now: datetime) -> None:
        written = campaign_pass(ctx, now=now)
        if written:
            log.info("campaign pass wrote %d email(s)", written)

    return PeriodicTask("campaign-sender", settings.campaign_pass_interval_seconds, one_pass)
