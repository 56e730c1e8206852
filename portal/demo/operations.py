"""Demo requests: record the lead and the form, and email the requester and the sales inbox.

One transaction upserts the lead, stores the submission and adds both emails; publication happens
after the commit. A replay of the same submission (a double click, a resent form) within
REPLAY_WINDOW finds the live submission with the same fingerprint and writes nothing.

The requester's confirmation is in the language of the page they sent the form from (the route
passes `language`); the sales inbox's notification in its reading language (English unless the
address has an account that chose otherwise). A refusal's message is English, marked for the
catalogue (`N_`): a page shows it in its own language from `DemoRequestError.message`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from dataclasses import dataclass
from datetime import timedelta

import sqlalchemy as sa

from portal.auth import reading_language
from portal.core import clock
from portal.core.i18n import ENGLISH, N_, language_or_default
from portal.core.text import InputError, normalise_email, one_line, paragraphs
from portal.demo.emails import demo_emails
from portal.outbox import write_then_publish

log = logging.getLogger(__name__)

NAME_MAX = 200
EMAIL_MAX = 254
MESSAGE_MAX = 2000
NOTE_MAX = 2000
# Where sales stands with a request, in the order it moves; the words admins read (a page shows
# them in its language: `_(label)`).
STATUS_LABELS = {"new": N_("New"), "contacted": N_("Contacted"), "done": N_("Done")}
# The same content again within this time is the same request; after it, a new one.
REPLAY_WINDOW = timedelta(hours=24)


class DemoRequestError(InputError):
    """Bad input for a demo request; the message is safe to show.

    `message` is the catalogue's (English) message and `values` fill its placeholders; str() is the
    English sentence."""

    def __init__(self, message: str, **values):
        super().__init__(message % values if values else message)
        self.message, self.values = message, values


@dataclass(frozen=True)
class DemoRequest:
    submission_id: int
    created: bool  # False: a replay; nothing was written and no email added
    queued: bool  # False: the emails are saved but wait for the relay


_UPSERT_LEAD = sa.text(
    """
    INSERT INTO demo_leads (email, name, company, first_requested_at, last_requested_at)
    VALUES (:email, :name, :company, :now, :now)
    ON CONFLICT (email) DO UPDATE
      SET name = excluded.name, company = excluded.company,
          request_count = demo_leads.request_count + 1, last_requested_at = excluded.last_requested_at
    RETURNING id
    """
)
_INSERT_SUBMISSION = sa.text(
    """
    INSERT INTO demo_submissions (lead_id, replay_key, name, email, company, message, created_at)
    VALUES (:lead_id, :key, :name, :email, :company, :message, :now)
    RETURNING id
    """
)


# The form is public: whoever sends it chooses the address. Past this many a day, an address gets no
# more confirmations (sales still hears of every request), so nobody can flood an inbox through it.
CONFIRMATIONS_PER_ADDRESS_PER_DAY = 2
_CONFIRMATIONS_SINCE = sa.text("SELECT COUNT(*) FROM demo_submissions WHERE email = :email AND created_at > :since")


def request_demo(
    ctx, *, name: str, email: str, company: str, message: str = "", language: str = ENGLISH
) -> DemoRequest:
    """Upsert the lead, store the submission and add both emails in one transaction; then publish.

    `language`: the page's the request was sent from; the confirmation is written in it."""
    name = one_line(name, "your name", NAME_MAX, DemoRequestError)
    company = one_line(company, "your company", NAME_MAX, DemoRequestError)
    email = normalise_email(email)
    if "@" not in email or len(email) > EMAIL_MAX:
        raise DemoRequestError(N_("Enter an email address like name@company.com."))
    message = paragraphs(message, "the message", MESSAGE_MAX, DemoRequestError)
    key = replay_key(name=name, email=email, company=company, message=message, secret_key=ctx.settings.secret_key)

    now = clock.utcnow()
    fields = {"name": name, "email": email, "company": company, "now": clock.iso(now)}
    with write_then_publish(ctx, now=now) as work:
        live = work.conn.execute(
            sa.text("SELECT id, created_at FROM demo_submissions WHERE replay_key = :k"), {"k": key}
        ).first()
        if live is not None and live.created_at > clock.iso(now - REPLAY_WINDOW):
            return DemoRequest(submission_id=live.id, created=False, queued=True)
        if live is not None:
            # The same content long after: a new request. Retire the old key so the new one is live.
            work.conn.execute(
                sa.text("UPDATE demo_submissions SET replay_key = replay_key || ':' || id WHERE id = :id"),
                {"id": live.id},
            )
        since = clock.iso(now - timedelta(days=1))
        confirmed_today = work.conn.execute(_CONFIRMATIONS_SINCE, {"email": email, "since": since}).scalar_one()
        lead_id = work.conn.execute(_UPSERT_LEAD, fields).scalar_one()
        submission_id = work.conn.execute(
            _INSERT_SUBMISSION, {**fields, "lead_id": lead_id, "key": key, "message": message}
        ).scalar_one()
        work.add(
            *demo_emails(
                submission_id,
                name=name,
                email=email,
                company=company,
                message=message,
                sales_inbox=ctx.settings.sales_inbox,
                confirm=confirmed_today < CONFIRMATIONS_PER_ADDRESS_PER_DAY,
                language=language_or_default(language),
                sales_language=reading_language(work.conn, ctx.settings.sales_inbox),
            )
        )
    log.info("demo request %s recorded", submission_id)
    return DemoRequest(submission_id=submission_id, created=True, queued=work.queued)


def replay_key(*, name: str, email: str, company: str, message: str, secret_key: str) -> str:
    """HMAC-SHA256 of the normalised fields under SECRET_KEY: the same form sent twice gives the same
    key, and the key alone confirms no guess at who sent it (a plain hash would)."""
    fields = [
        " ".join(name.split()).lower(),
        normalise_email(email),
        " ".join(company.split()).lower(),
        "\n".join(line.rstrip() for line in message.replace("\r\n", "\n").strip().split("\n")),
    ]
    return hmac.new(secret_key.encode(), json.dumps(fields).encode(), hashlib.sha256).hexdigest()


class DemoRequestNotFound(LookupError):
    pass


def follow_up(db, *, submission_id: int, status: str, note: str, admin_id: int) -> None:
    """Record where sales stands with a demo request, and its note, in one write."""
    if status not in STATUS_LABELS:
        raise DemoRequestError(N_("Choose new, contacted or done."))
    note = paragraphs(note, "the note", NOTE_MAX, DemoRequestError)
    with db.write() as conn:
        changed = conn.execute(
            sa.text(
                """
                UPDATE demo_submissions
                SET status = :status, note = :note, status_changed_at = :now, status_changed_by = :admin_id
                WHERE id = :id
                """
            ),
            {"status": status, "note": note, "now": clock.now_iso(), "admin_id": admin_id, "id": submission_id},
        ).rowcount
    if not changed:
        raise DemoRequestNotFound(submission_id)
    log.info("demo request %s marked %s", submission_id, status)
