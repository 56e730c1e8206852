"""Recording a download, and erasing a person: one db.write() each.

An erasure replaces the address everywhere by a pseudonym (erased-<random>@erased.invalid, the same
in every table, so the rows still join, and the same again if the address is erased again), records
the address's keyed hash with it (portal/core/pseudonyms.py: what arrives later is written under
the pseudonym), blanks names and free text the person wrote, removes secrets (password, links) and
what only served them (subscriptions, reset requests, failure counts), and cancels every email to
them of which nothing can have gone out. What others wrote about the person goes too: an admin's
decision note, the company name they typed, their name as the inviter in the invitations they sent
(A_COLLEAGUE instead), and the demo request's replay key (a plain hash of what they typed); their
sessions' IDs are keyed (a platform's may carry a first name). Hours stay with the company: a
session keeps its minutes, company and account (now "Former volunteer"), so reports keep their
totals, and a closed year's snapshot (figures only) never changes. The email tables are erased by
the engine (portal.outbox.erase_address), which keeps a bounce or complaint as a keyed hash. The
audit (`privacy_events`) records who erased, when, and the pseudonym: not the address.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from portal.applications import application_subject
from portal.attendance import attach_unmatched_sessions
from portal.auth import login_failure_key
from portal.core import clock
from portal.core.db import Database
from portal.core.i18n import N_
from portal.core.pseudonyms import ERASED_NAME, new_pseudonym, pseudonym_of, record_erasure, session_key
from portal.core.text import normalise_email
from portal.demo import submission_subject
from portal.invitations import INVITER_FIELD, invitation_subject, inviter_stand_ins
from portal.outbox import EmailsInFlight, cancel_and_count, erase_address, forget_name_in_emails, unsettled_about
from portal.outbox.operate.reads import unsettled_ids_for_recipient

log = logging.getLogger(__name__)

CANCEL_REASON = "recipient_erased"

_RECORD = sa.text(
    """
    INSERT INTO privacy_events (action, subject_user_id, pseudonym, actor_user_id, created_at)
    VALUES (:action, :subject, :pseudonym, :actor, :now)
    """
)
_USER = sa.text("SELECT id FROM users WHERE email = :address")
# Statements of one erasure, in order; each binds :address, :pseudonym, :user_id, :now and :unusable.
_ERASE = [
    """UPDATE users SET email = :pseudonym, name = :name, password_hash = :unusable,
              session_generation = session_generation + 1, deactivated_at = COALESCE(deactivated_at, :now)
       WHERE id = :user_id""",
    """UPDATE invitations SET email = :pseudonym, name = NULL, token_nonce = :unusable || '-n-' || id,
              token_hash = :unusable || '-h-' || id
       WHERE email = :address""",
    # A session stored under the address after an earlier erasure (before records for erased
    # addresses were written under the pseudonym), beside the pseudonymised one it would correct:
    # not newer than it, it goes; newer, it replaces it (OR REPLACE, below).
    """DELETE FROM attendance_sessions
       WHERE volunteer_email = :address
         AND EXISTS (SELECT 1 FROM attendance_sessions AS kept JOIN json_each(:session_keys) AS k
                     ON k.value ->> '$[0]' = attendance_sessions.id
                     WHERE kept.volunteer_email = :pseudonym AND kept.platform = attendance_sessions.platform
                       AND kept.session_id = k.value ->> '$[1]'
                       AND kept.updated_at >= attendance_sessions.updated_at)""",
    # Session IDs keyed (a platform's may carry a first name), as a later record's are (attendance).
    """UPDATE OR REPLACE attendance_sessions SET volunteer_email = :pseudonym,
              session_id = (SELECT k.value ->> '$[1]' FROM json_each(:session_keys) AS k
                            WHERE k.value ->> '$[0]' = attendance_sessions.id)
       WHERE volunteer_email = :address""",
    "UPDATE campaign_recipients SET email = :pseudonym, name = :name WHERE email = :address OR user_id = :user_id",
    # What an admin wrote to the person ("Dear ..."), while the applications still hold the address.
    """UPDATE application_decisions SET note = ''
       WHERE application_id IN (SELECT id FROM company_applications WHERE contact_email = :address)""",
    # The company name the person typed goes too (an approved application's company stays, in companies).
    """UPDATE company_applications SET contact_email = :pseudonym, contact_name = :name, message = '',
              company_name = '', company_key = 'erased-' || id
       WHERE contact_email = :address""",
    # The replay key was a plain hash of what the person typed: anyone holding it could confirm a guess.
    """UPDATE demo_submissions SET email = :pseudonym, name = :name, company = '', message = '', note = '',
              replay_key = 'erased-' || id
       WHERE email = :address""",
    "UPDATE demo_leads SET email = :pseudonym, name = :name, company = '' WHERE email = :address",
    "DELETE FROM password_resets WHERE user_id = :user_id",
    "DELETE FROM password_reset_requests WHERE address = :address",
    "DELETE FROM report_subscriptions WHERE user_id = :user_id",
    # A certificate names the person, and its public verify page would show the name: it goes.
    "DELETE FROM volunteer_certificates WHERE user_id = :user_id",
    "DELETE FROM login_failures WHERE address_hash = :failure_key",
]


_SENT_INVITATIONS = sa.text("SELECT id FROM invitations WHERE invited_by = :user_id")
_SESSIONS = sa.text("SELECT id, session_id FROM attendance_sessions WHERE volunteer_email = :address")
_DEMO_REQUESTS = sa.text("SELECT id FROM demo_submissions WHERE email = :address")
_APPLICATIONS = sa.text("SELECT id FROM company_applications WHERE contact_email = :address")


def _subjects_about(conn, address: str) -> list[str]:
    """The rows whose emails to others (the sales or TEEI inbox) carry what this person wrote."""
    params = {"address": address}
    return [submission_subject(i) for i in conn.execute(_DEMO_REQUESTS, params).scalars()] + [
        application_subject(i) for i in conn.execute(_APPLICATIONS, params).scalars()
    ]


def _forget_as_inviter(conn, user_id: int | None, *, now: datetime) -> None:
    """The invitations the person sent to others name them as the inviter: A_COLLEAGUE instead."""
    if user_id is None:
        return
    sent = [invitation_subject(i) for i in conn.execute(_SENT_INVITATIONS, {"user_id": user_id}).scalars()]
    stand_ins, kept = inviter_stand_ins()
    forget_name_in_emails(conn, about=sent, field=INVITER_FIELD, stand_ins=stand_ins, kept=kept, now=now)


class NothingToErase(ValueError):
    """The portal holds nothing under that address (str(): the English message, marked for the catalogue)."""


@dataclass(frozen=True)
class Erasure:
    pseudonym: str
    emails_cancelled: int  # stopped by this erasure: they will not go out
    emails_erased: int
    # Emails already with the provider, or on their way to it, that may still go out: nothing was
    # erased, ask again once they have settled.
    waiting_for: int = 0

    @property
    def done(self) -> bool:
        return self.waiting_for == 0


def record_download(db: Database, *, subject_user_id: int | None, actor_user_id: int, now: datetime) -> None:
    with db.write() as conn:
        conn.execute(
            _RECORD,
            {
                "action": "download",
                "subject": subject_user_id,
                "pseudonym": None,
                "actor": actor_user_id,
                "now": clock.iso(now),
            },
        )


def erase_person(ctx, *, address: str, actor_user_id: int, now: datetime, holds_data: bool) -> Erasure:
    """Erase everything held about `address`, in one transaction (see the module's docstring).

    While an email to the address is with the provider or on its way to it, only the cancellations
    commit and the result says how many emails were stopped and how many to wait for (they may still
    go out); the admin asks again a moment later."""
    if not holds_data:
        raise NothingToErase(N_("The portal holds nothing under that address."))
    address = normalise_email(address)
    secret_key = ctx.settings.secret_key
    with ctx.db.write() as conn:
        # Erased before (what arrived since is erased now): the same pseudonym, so the rows still join.
        pseudonym = pseudonym_of(conn, address, secret_key) or new_pseudonym()
        about = _subjects_about(conn, address)
        unsent = unsettled_ids_for_recipient(conn, address) + unsettled_about(conn, about)
        cancelled = cancel_and_count(conn, unsent, CANCEL_REASON, now=now).cancelled
        try:
            erased = erase_address(conn, address, about=about, pseudonym=pseudonym, secret_key=secret_key, now=now)
        except EmailsInFlight as waiting:
            return Erasure(pseudonym="", emails_cancelled=len(cancelled), emails_erased=0, waiting_for=waiting.count)
        user_id = conn.execute(_USER, {"address": address}).scalar()
        sessions = conn.execute(_SESSIONS, {"address": address}).all()
        params = {
            "address": address,
            "pseudonym": pseudonym,
            "user_id": user_id,
            "name": ERASED_NAME,
            "now": clock.iso(now),
            "unusable": "erased-" + secrets.token_hex(16),
            "failure_key": login_failure_key(address),
            "session_keys": json.dumps([[row.id, session_key(row.session_id, secret_key)] for row in sessions]),
        }
        for statement in _ERASE:
            conn.execute(sa.text(statement), params)
        former = conn.execute(_USER, {"address": pseudonym}).scalar()  # the account, erased now or before
        if former is not None:
            # Sessions stored under the address after an earlier erasure count for the former volunteer.
            attach_unmatched_sessions(conn, user_id=former, email=pseudonym)
        _forget_as_inviter(conn, user_id, now=now)
        record_erasure(conn, address, pseudonym=pseudonym, secret_key=secret_key, now=params["now"])
        conn.execute(
            _RECORD,
            {
                "action": "erase",
                "subject": user_id,
                "pseudonym": pseudonym,
                "actor": actor_user_id,
                "now": params["now"],
            },
        )
    # Pages that held the address leave the write-ahead log, and secure_delete zeroed them in place.
    ctx.db.flush_erased_pages()
    log.info("person erased as %s by user %s", pseudonym, actor_user_id)
    return Erasure(pseudonym=pseudonym, emails_cancelled=len(cancelled), emails_erased=erased.emails)
