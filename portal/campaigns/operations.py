"""Writing campaigns: compose, edit or duplicate a draft, send a test, send now or at a time, cancel; unsubscribe.

Each is one transaction (`db.write()` or `write_then_publish`), checked inside it, so a refused
action writes nothing. Writing the recipients' rows, batch by batch, is in sending.py.

A campaign has its English version (`subject`, `body`) and, if the admin writes one, a Norwegian
version (`subject_nb`, `body_nb`: both or neither); versions.py says who gets which.

A refusal's message is in English, marked for the catalogue (`N_`): a page shows it in its own
language from `CampaignError.message` and `.values`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from portal.campaigns import audiences, emails, sending, topics
from portal.campaigns.markdown import MAX_BODY_BYTES
from portal.campaigns.versions import versions_of
from portal.core import clock
from portal.core.i18n import ENGLISH, N_
from portal.core.text import InputError, hidden_characters_in
from portal.outbox import cancel_and_count, cancel_unsent, write_then_publish
from portal.outbox.operate import reads

MAX_NAME = 120
MAX_SUBJECT = 200
CANCEL_REASON = "campaign_cancelled"
UNSUBSCRIBE_REASON = "recipient_unsubscribed"
NOBODY = N_("Nobody in this audience can receive it now, so there is nothing to send.")
PAST = N_("The send time has passed. Choose a time in the future, or leave it empty to send now.")
OUT_OF_DATE = N_("The form was out of date. Reload the page and try again.")
BODY_TOO_LONG = N_("The body is over %(kb)d KB. Shorten it, or link to a page instead.")
NORWEGIAN_BODY_TOO_LONG = N_("The Norwegian body is over %(kb)d KB. Shorten it, or link to a page instead.")
NORWEGIAN_SUBJECT_MISSING = N_("Write the Norwegian subject too, or leave the Norwegian version empty.")
NORWEGIAN_BODY_MISSING = N_("Write the Norwegian body too, or leave the Norwegian version empty.")
# Full sentences per status, so each language words them its own way.
_ONLY_A_DRAFT_IS_EDITED = {
    "scheduled": N_("This campaign was already scheduled; only a draft is edited."),
    "sending": N_("This campaign was already sent; only a draft is edited."),
    "sent": N_("This campaign was already sent; only a draft is edited."),
    "cancelled": N_("This campaign was already cancelled; only a draft is edited."),
}
_SENT_ONLY_ONCE = {
    "scheduled": N_("This campaign was already scheduled; it is sent only once."),
    "sending": N_("This campaign was already sent; it is sent only once."),
    "sent": N_("This campaign was already sent; it is sent only once."),
    "cancelled": N_("This campaign was already cancelled; it is sent only once."),
}
_NOTHING_TO_CANCEL = N_("This campaign was already cancelled; there is nothing to cancel.")
_REQUEST_ID = re.compile(r"^[0-9a-f]{32}$")


class CampaignError(InputError):
    """Bad input or a state that refuses the action; the message is safe to show, nothing was written.

    `message` is the catalogue's (English) message and `values` fill its placeholders; str() is the
    English sentence."""

    def __init__(self, message: str, **values):
        super().__init__(message % values if values else message)
        self.message, self.values = message, values


class ReachChanged(CampaignError):
    """The audience is not the size the admin confirmed: they confirm again with the new number
    (a page words it with its own plural: `reach`)."""

    def __init__(self, reach: int):
        people = "person" if reach == 1 else "people"
        super().__init__(f"The audience changed since the confirmation: it now reaches {reach} {people}.")
        self.reach = reach


@dataclass(frozen=True)
class SendResult:
    started: bool  # False: scheduled for later
    send_at: str
    recipients: int | None


_DAY_FIRST = re.compile(r"^(\d{1,2})\.(\d{1,2})\.(\d{4})[ T]+(\d{1,2})[:.](\d{2})$")


def parse_send_at(text: str | None, tz) -> datetime | None:
    """The form's send time: empty for now; an ISO time (2026-12-24T09:00 or with a space) or a
    day-first one as Norwegians write it (24.12.2026 09:00), in PORTAL_TIMEZONE unless it names its offset."""
    text = (text or "").strip()
    if not text:
        return None
    day_first = _DAY_FIRST.match(text)
    try:
        if day_first:
            day, month, year, hour, minute = (int(part) for part in day_first.groups())
            moment = datetime(year, month, day, hour, minute)
        else:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise CampaignError(
            N_("Give the send time as a date and time, e.g. 24.12.2026 09:00 or 2026-12-24 09:00, or leave it empty.")
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=tz)


HIDDEN_CHARACTERS = N_(
    "Remove the invisible characters (zero-width spaces, marks that change the text's direction) from "
    "the campaign: they would hide or reorder what its recipients read."
)


def _refuse_hidden_characters(*texts: str | None) -> None:
    if any(hidden_characters_in(text or "") for text in texts):
        raise CampaignError(HIDDEN_CHARACTERS)


def check_content(name: str, subject: str, body: str) -> tuple[str, str, str]:
    _refuse_hidden_characters(name, subject, body)
    name, subject = " ".join((name or "").split()), " ".join((subject or "").split())
    if not name:
        raise CampaignError(N_("Give the campaign a name."))
    if not subject:
        raise CampaignError(N_("Write a subject."))
    if len(name) > MAX_NAME or len(subject) > MAX_SUBJECT:
        raise CampaignError(
            N_("Keep the name under %(name)d and the subject under %(subject)d characters."),
            name=MAX_NAME,
            subject=MAX_SUBJECT,
        )
    if not (body or "").strip():
        raise CampaignError(N_("Write the body of the email."))
    if len(body.encode("utf-8")) > MAX_BODY_BYTES:
        raise CampaignError(BODY_TOO_LONG, kb=MAX_BODY_BYTES // 1024)
    return name, subject, body


def check_norwegian(subject_nb: str | None, body_nb: str | None) -> tuple[str | None, str | None]:
    """The Norwegian version: both its subject and its body, or neither (None, None)."""
    _refuse_hidden_characters(subject_nb, body_nb)
    subject_nb = " ".join((subject_nb or "").split())
    body_nb = body_nb if (body_nb or "").strip() else ""
    if not subject_nb and not body_nb:
        return None, None
    if not subject_nb:
        raise CampaignError(NORWEGIAN_SUBJECT_MISSING)
    if not body_nb:
        raise CampaignError(NORWEGIAN_BODY_MISSING)
    if len(subject_nb) > MAX_SUBJECT:
        raise CampaignError(N_("Keep the Norwegian subject under %(subject)d characters."), subject=MAX_SUBJECT)
    if len(body_nb.encode("utf-8")) > MAX_BODY_BYTES:
        raise CampaignError(NORWEGIAN_BODY_TOO_LONG, kb=MAX_BODY_BYTES // 1024)
    return subject_nb, body_nb


def create_campaign(
    db,
    *,
    admin_id: int,
    name: str,
    subject: str,
    body: str,
    audience: str,
    subject_nb: str | None = None,
    body_nb: str | None = None,
    topic: str = topics.PROGRAMME_NEWS,
) -> int:
    name, subject, body = check_content(name, subject, body)
    subject_nb, body_nb = check_norwegian(subject_nb, body_nb)
    now = clock.now_iso()
    with db.write() as conn:
        audiences.check_audience(conn, audience)
        topics.check_topic(conn, topic)
        return conn.execute(
            sa.text(
                """
                INSERT INTO campaigns (name, subject, body, subject_nb, body_nb, audience, topic, created_by,
                    created_at, updated_at)
                VALUES (:name, :subject, :body, :subject_nb, :body_nb, :audience, :topic, :by, :now, :now)
                RETURNING id
                """
            ),
            {
                "name": name,
                "subject": subject,
                "body": body,
                "subject_nb": subject_nb,
                "body_nb": body_nb,
                "audience": audience,
                "topic": topic,
                "by": admin_id,
                "now": now,
            },
        ).scalar_one()


def update_draft(
    db,
    *,
    campaign_id: int,
    name: str,
    subject: str,
    body: str,
    audience: str,
    subject_nb: str | None = None,
    body_nb: str | None = None,
    topic: str = topics.PROGRAMME_NEWS,
) -> None:
    """A draft's content and audience, replaced (a Norwegian version left empty is removed); once
    sending was asked for, a campaign is not edited."""
    name, subject, body = check_content(name, subject, body)
    subject_nb, body_nb = check_norwegian(subject_nb, body_nb)
    with db.write() as conn:
        campaign = _campaign(conn, campaign_id)
        if campaign.status != "draft":
            raise CampaignError(_ONLY_A_DRAFT_IS_EDITED[campaign.status])
        audiences.check_audience(conn, audience)
        topics.check_topic(conn, topic)
        conn.execute(
            sa.text(
                "UPDATE campaigns SET name = :name, subject = :subject, body = :body, subject_nb = :subject_nb, "
                "body_nb = :body_nb, audience = :audience, topic = :topic, updated_at = :now "
                "WHERE id = :id AND status = 'draft'"
            ),
            {
                "name": name,
                "subject": subject,
                "body": body,
                "subject_nb": subject_nb,
                "body_nb": body_nb,
                "audience": audience,
                "topic": topic,
                "now": clock.now_iso(),
                "id": campaign_id,
            },
        )


def duplicate(db, *, campaign_id: int, admin_id: int, copy_of: str = "Copy of %(name)s") -> int:
    """A new draft with the campaign's content, both versions, and audience (of any status: a sent
    one is a template). `copy_of` names it (the page's words for "Copy of …")."""
    now = clock.now_iso()
    with db.write() as conn:
        campaign = _campaign(conn, campaign_id)
        name = (copy_of % {"name": campaign.name})[:MAX_NAME]
        return conn.execute(
            sa.text(
                """
                INSERT INTO campaigns (name, subject, body, subject_nb, body_nb, audience, topic, created_by,
                    created_at, updated_at)
                VALUES (:name, :subject, :body, :subject_nb, :body_nb, :audience, :topic, :by, :now, :now)
                RETURNING id
                """
            ),
            {
                "name": name,
                "topic": campaign.topic,
                "subject": campaign.subject,
                "body": campaign.body,
                "subject_nb": campaign.subject_nb,
                "body_nb": campaign.body_nb,
                "audience": campaign.audience,
                "by": admin_id,
                "now": now,
            },
        ).scalar_one()


def _campaign(conn, campaign_id: int):
    found = conn.execute(sa.text("SELECT * FROM campaigns WHERE id = :id"), {"id": campaign_id}).first()
    if found is None:
        raise CampaignError(N_("There is no such campaign."))
    return found


def send_test(ctx, *, campaign_id: int, admin, request_id: str, language: str = ENGLISH) -> bool:
    """The campaign's version in `language` to the signed-in admin, now; False if this request ID
    was already sent for that version (a double click)."""
    if not _REQUEST_ID.match(request_id or ""):
        raise CampaignError(OUT_OF_DATE)
    with write_then_publish(ctx, now=clock.utcnow()) as work:
        campaign = _campaign(work.conn, campaign_id)
        if language not in versions_of(campaign._mapping):
            raise CampaignError(N_("This campaign has no version in that language."))
        shared = emails.campaign_input(campaign._mapping, language)
        intent = emails.test_email(shared, admin=admin, request_id=request_id)
        new = reads.status_by_key(work.conn, intent.idempotency_key) is None
        work.add(intent)
    return new


def send(
    ctx,
    *,
    campaign_id: int,
    admin_id: int,
    send_at: datetime | None,
    now: datetime | None = None,
    expected_reach: int | None = None,
) -> SendResult:
    """Send now (the recipient list is fixed at once) or schedule for `send_at` (the worker's
    campaign pass starts it when due). A campaign is sent once: a second send is refused.

    `expected_reach`, the number the admin confirmed: if the audience has another size now, nothing
    is written (ReachChanged), so nobody gets an email the confirmation did not count."""
    now = now or clock.utcnow()
    if send_at is not None and send_at <= now:
        raise CampaignError(PAST)
    with ctx.db.write() as conn:
        campaign = _campaign(conn, campaign_id)
        if campaign.status != "draft":
            raise CampaignError(_SENT_ONLY_ONCE[campaign.status])
        if send_at is not None:
            people = audiences.reach(conn, campaign.audience, campaign.topic).recipients
            if not people:
                raise CampaignError(NOBODY)
            if expected_reach is not None and people != expected_reach:
                raise ReachChanged(people)
        when = clock.iso(send_at or now)
        conn.execute(
            sa.text(
                "UPDATE campaigns SET status = 'scheduled', send_at = :at, sent_by = :by, updated_at = :now "
                "WHERE id = :id AND status = 'draft'"
            ),
            {"at": when, "by": admin_id, "now": clock.iso(now), "id": campaign_id},
        )
        recipients = sending.start_campaign(conn, campaign_id) if send_at is None else None
        if recipients == 0:
            raise CampaignError(NOBODY)  # rolls the whole send back: the campaign stays a draft
        if recipients is not None and expected_reach is not None and recipients != expected_reach:
            raise ReachChanged(recipients)  # rolls back too: the list written is not the one confirmed
    return SendResult(started=send_at is None, send_at=when, recipients=recipients)


@dataclass(frozen=True)
class CancelResult:
    """What a cancel did, as counts for the page to word."""

    stopped: int  # emails that will not go out
    # Emails already with the provider, or on their way to it (a delivery asked to stop may have
    # made its request already): the provider's answer decides, and the page shows it.
    may_still_go_out: int


def cancel(db, *, campaign_id: int) -> CancelResult:
    """Stop a campaign before or while it sends; says how many emails it stopped and how many
    may still go out.

    Rows an attempt has reached are left to their delivery. The batch writer only writes while
    the campaign is `sending`, and this transaction changes that, so no row is written after it.
    A `sent` campaign (every batch written) can still be stopped while some of its emails wait
    for the provider's rate limit."""
    with db.write() as conn:
        campaign = _campaign(conn, campaign_id)
        if campaign.status not in ("draft", "scheduled", "sending", "sent"):
            raise CampaignError(_NOTHING_TO_CANCEL)
        ids = reads.ids_for_subject(conn, emails.subject_ref(campaign_id))
        now = clock.utcnow()
        done = cancel_and_count(conn, ids, CANCEL_REASON, now=now)
        if campaign.status == "sent" and not done.cancelled and not done.asked_to_stop:
            raise CampaignError(
                N_("Every email of this campaign has gone to the provider; there is nothing to cancel.")
            )
        conn.execute(
            sa.text("UPDATE campaigns SET status = 'cancelled', cancelled_at = :now, updated_at = :now WHERE id = :id"),
            {"now": clock.iso(now), "id": campaign_id},
        )
        return CancelResult(stopped=len(done.cancelled), may_still_go_out=done.may_still_go_out)


def _cancel_waiting(conn, *, user_id: int, topic: str | None, now) -> None:
    """Rows of this person's campaigns being written or sent (of `topic`, or of any topic for None)
    of which nothing can have gone out: cancelled, or asked to stop if a delivery holds them (the
    engine's leave-out settles them before any request), through the engine's one cancel."""
    waiting = conn.execute(
        sa.text(
            """
            SELECT r.campaign_id FROM campaign_recipients r JOIN campaigns c ON c.id = r.campaign_id
            WHERE r.user_id = :u AND c.status IN ('sending', 'sent') AND (:topic IS NULL OR c.topic = :topic)
            """
        ),
        {"u": user_id, "topic": topic},
    ).scalars()
    for sending_id in list(waiting):
        outbox_id = reads.id_by_key(conn, emails.recipient_key(sending_id, user_id))
        if outbox_id:
            cancel_unsent(conn, [outbox_id], UNSUBSCRIBE_REASON, now=now)


def _no_campaigns(conn, *, user_id: int, campaign_id: int | None, now) -> bool:
    new = conn.execute(
        sa.text(
            "INSERT INTO campaign_unsubscribes (user_id, campaign_id, created_at) VALUES (:u, :c, :now) "
            "ON CONFLICT (user_id) DO NOTHING"
        ),
        {"u": user_id, "c": campaign_id, "now": clock.iso(now)},
    ).rowcount
    _cancel_waiting(conn, user_id=user_id, topic=None, now=now)
    return bool(new)


def _opt_out(conn, *, user_id: int, topic: str, campaign_id: int | None, now) -> bool:
    new = conn.execute(
        sa.text(
            "INSERT INTO campaign_topic_optouts (user_id, topic, campaign_id, created_at) "
            "VALUES (:u, :t, :c, :now) ON CONFLICT (user_id, topic) DO NOTHING"
        ),
        {"u": user_id, "t": topic, "c": campaign_id, "now": clock.iso(now)},
    ).rowcount
    _cancel_waiting(conn, user_id=user_id, topic=topic, now=now)
    return bool(new)


def _user_exists(conn, user_id: int) -> bool:
    return conn.execute(sa.text("SELECT 1 FROM users WHERE id = :u"), {"u": user_id}).first() is not None


def unsubscribe(db, *, user_id: int, campaign_id: int | None = None) -> bool:
    """No more campaigns at all for this person (transactional email is not affected). Rows of a
    campaign already written of which nothing can have gone out are cancelled too. False if they
    had already unsubscribed."""
    now = clock.utcnow()
    with db.write() as conn:
        if not _user_exists(conn, user_id):
            return False
        return _no_campaigns(conn, user_id=user_id, campaign_id=campaign_id, now=now)


def opt_out_of_campaign_topic(db, *, user_id: int, campaign_id: int) -> str | None:
    """RFC 8058's one-click from a campaign's link: no more campaigns of that campaign's topic
    (others, and transactional email, are not affected); its unsent rows are cancelled as
    `unsubscribe` does. The topic, or None for an unknown person or campaign."""
    now = clock.utcnow()
    with db.write() as conn:
        topic = conn.execute(sa.text("SELECT topic FROM campaigns WHERE id = :c"), {"c": campaign_id}).scalar()
        if topic is None or not _user_exists(conn, user_id):
            return None
        _opt_out(conn, user_id=user_id, topic=topic, campaign_id=campaign_id, now=now)
        return topic


def set_preferences(
    db, *, user_id: int, wanted: set[str] | frozenset[str], no_campaigns: bool, campaign_id: int | None = None
) -> None:
    """The preference page's choices, in one write: the topics in `wanted` are received, every other
    is opted out of; `no_campaigns` stops every campaign (off: campaigns come again, by topic). A
    topic not on the list refuses the whole form (TopicError) and changes nothing."""
    now = clock.utcnow()
    with db.write() as conn:
        codes = topics.topic_codes(conn)
        if not set(wanted) <= set(codes):
            raise topics.TopicError()
        if not _user_exists(conn, user_id):
            return
        for code in codes:
            if code in wanted:
                conn.execute(
                    sa.text("DELETE FROM campaign_topic_optouts WHERE user_id = :u AND topic = :t"),
                    {"u": user_id, "t": code},
                )
            else:
                _opt_out(conn, user_id=user_id, topic=code, campaign_id=campaign_id, now=now)
        if no_campaigns:
            _no_campaigns(conn, user_id=user_id, campaign_id=campaign_id, now=now)
        else:
            conn.execute(sa.text("DELETE FROM campaign_unsubscribes WHERE user_id = :u"), {"u": user_id})
