"""Demo requests: record the lead and the form, and email the requester and the sales inbox.

One transaction upserts the lead, stores the submission and adds both email intents; publication
happens after the commit. A replay of the same submission (a double click, a resent form) within
REPLAY_WINDOW finds the live submission with the same fingerprint and writes nothing.
"""
from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import timedelta

import sqlalchemy as sa
from redis import Redis

from portal.auth.service import normalise_email
from portal.db import Database
from portal.outbox import EmailIntent, add_outbox_rows, clock, publish_outbox_rows
from portal.settings import Settings

log = logging.getLogger(__name__)

NAME_MAX = 200
EMAIL_MAX = 254
MESSAGE_MAX = 2000
# The same content again within this time is the same request; after it, a new one.
REPLAY_WINDOW = timedelta(hours=24)


class DemoRequestError(ValueError):
    """Bad input for a demo request; the message is safe to show."""


@dataclass(frozen=True)
class DemoRequest:
    submission_id: int
    created: bool      # False: a replay; nothing was written and no email added
    queued: bool       # False: the emails are saved but wait for the relay


def request_demo(
    db: Database, redis: Redis, settings: Settings, *, name: str, email: str, company: str, message: str = ""
) -> DemoRequest:
    """Upsert the lead, store the submission and add both emails in one transaction; then publish."""
    name = _one_line(name, "your name")
    company = _one_line(company, "your company")
    email = normalise_email(email or "")
    if "@" not in email or len(email) > EMAIL_MAX:
        raise DemoRequestError("Enter an email address like name@company.com.")
    message = (message or "").replace("\r\n", "\n").strip()
    if len(message) > MESSAGE_MAX:
        raise DemoRequestError(f"The message can be at most {MESSAGE_MAX:,} characters.")
    key = replay_key(name=name, email=email, company=company, message=message)

    now = clock.utcnow()
    now_iso = clock.iso(now)
    with db.write() as conn:
        live = conn.execute(
            sa.text("SELECT id, created_at FROM demo_submissions WHERE replay_key = :k"), {"k": key}
        ).first()
        if live is not None and live.created_at > clock.iso(now - REPLAY_WINDOW):
            return DemoRequest(submission_id=live.id, created=False, queued=True)
        if live is not None:
            # The same content long after: a new request. Retire the old key so the new one is live.
            conn.execute(sa.text("UPDATE demo_submissions SET replay_key = replay_key || ':' || id WHERE id = :id"),
                         {"id": live.id})
        lead_id = conn.execute(
            sa.text(
                """
                INSERT INTO demo_leads (email, name, company, first_requested_at, last_requested_at)
                VALUES (:email, :name, :company, :now, :now)
                ON CONFLICT (email) DO UPDATE
                  SET name = excluded.name, company = excluded.company,
                      request_count = demo_leads.request_count + 1, last_requested_at = excluded.last_requested_at
                RETURNING id
                """
            ),
            {"email": email, "name": name, "company": company, "now": now_iso},
        ).scalar_one()
        submission_id = conn.execute(
            sa.text(
                """
                INSERT INTO demo_submissions (lead_id, replay_key, name, email, company, message, created_at)
                VALUES (:lead_id, :key, :name, :email, :company, :message, :now)
                RETURNING id
                """
            ),
            {"lead_id": lead_id, "key": key, "name": name, "email": email, "company": company,
             "message": message, "now": now_iso},
        ).scalar_one()
        subject_ref = f"demo_submission:{submission_id}"
        outbox_ids = add_outbox_rows(
            conn,
            [
                EmailIntent(family="demo_confirmation", recipient=email,
                            idempotency_key=f"demo:{submission_id}:confirmation",
                            data={"name": name, "company": company}, subject_ref=subject_ref),
                EmailIntent(family="demo_notification", recipient=settings.sales_inbox,
                            idempotency_key=f"demo:{submission_id}:notification",
                            data={"name": name, "company": company, "requester_email": email, "message": message},
                            subject_ref=subject_ref),
            ],
            settings,
        )
    published = publish_outbox_rows(db, redis, outbox_ids)
    log.info("demo request %s recorded", submission_id)
    return DemoRequest(submission_id=submission_id, created=True, queued=published.queued)


def replay_key(*, name: str, email: str, company: str, message: str) -> str:
    """SHA-256 of the normalised fields: the same form sent twice gives the same key."""
    fields = [" ".join(name.split()).lower(), normalise_email(email), " ".join(company.split()).lower(),
              "\n".join(line.rstrip() for line in message.replace("\r\n", "\n").strip().split("\n"))]
    return hashlib.sha256(json.dumps(fields).encode()).hexdigest()


def _one_line(value: str, what: str) -> str:
    clean = " ".join((value or "").split())
    if not clean:
        raise DemoRequestError(f"Enter {what}.")
    if len(clean) > NAME_MAX:
        raise DemoRequestError(f"Keep {what} under {NAME_MAX} characters.")
    return clean
