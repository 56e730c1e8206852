"""How long the portal keeps each kind of personal data, in one place, and the purge that applies it.

The engine keeps its own rules (portal/outbox/operate/retention.py: receipt fields after
RECEIPT_RETENTION_DAYS, a settled email's recipient and content after OUTBOX_RETENTION_DAYS); this
module adds the areas' rules and lists both, with what they hold now, for the admins' page. Data of
people with an account (their account, memberships, attendance) is kept while the account exists,
because the company's reports are made of it; it goes on request (operations.erase_person).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database
from portal.core.i18n import N_
from portal.outbox import PeriodicTask

log = logging.getLogger("portal.worker")
PASSWORD_RESET_KEPT_DAYS = 30  # after a link is used or has expired
EXPIRED = "expired-{id}@erased.invalid"


@dataclass(frozen=True)
class Rule:
    kind: str  # what a person reads (English, marked for the catalogue; the page translates it)
    setting: str  # the variable that sets the period, or "fixed"
    days: int
    held: str  # SQL: COUNT(*) and MIN(moment) of what the rule will erase one day, no parameters
    erase: tuple[str, ...]  # statements binding :cutoff (and :expired for a pseudonym)


@dataclass(frozen=True)
class Holding:
    kind: str
    setting: str
    days: int
    count: int
    oldest: str | None
    erased_from: str | None  # when the purge takes the oldest


def rules(settings) -> list[Rule]:
    return [
        Rule(
            N_("Demo requests (name, address, company, message)"),
            "DEMO_REQUEST_RETENTION_DAYS",
            settings.demo_request_retention_days,
            "SELECT COUNT(*), MIN(created_at) FROM demo_submissions WHERE email NOT LIKE '%@erased.invalid'",
            (
                "UPDATE demo_submissions SET name = '', email = 'expired-' || id || '@erased.invalid', company = '', "
                "message = '', note = '', replay_key = 'expired-' || id "
                "WHERE created_at < :cutoff AND email NOT LIKE '%@erased.invalid'",
                "UPDATE demo_leads SET name = '', email = 'expired-' || id || '@erased.invalid', company = '' "
                "WHERE last_requested_at < :cutoff AND email NOT LIKE '%@erased.invalid'",
            ),
        ),
        Rule(
            N_("Declined partner applications (contact's name, address, message)"),
            "DECLINED_APPLICATION_RETENTION_DAYS",
            settings.declined_application_retention_days,
            "SELECT COUNT(*), MIN(updated_at) FROM company_applications "
            "WHERE state = 'declined' AND contact_email NOT LIKE '%@erased.invalid'",
            (
                "UPDATE company_applications SET contact_name = '', message = '', "
                "contact_email = 'expired-' || id || '@erased.invalid' "
                "WHERE state = 'declined' AND updated_at < :cutoff AND contact_email NOT LIKE '%@erased.invalid'",
            ),
        ),
        Rule(
            N_("Invitations never accepted (the invited address)"),
            "OPEN_INVITATION_RETENTION_DAYS",
            settings.open_invitation_retention_days,
            "SELECT COUNT(*), MIN(expires_at) FROM invitations "
            "WHERE accepted_at IS NULL AND email NOT LIKE '%@erased.invalid'",
            (
                "UPDATE invitations SET email = 'expired-' || id || '@erased.invalid', name = NULL, "
                "token_nonce = 'expired-n-' || id, token_hash = 'expired-h-' || id "
                "WHERE accepted_at IS NULL AND COALESCE(revoked_at, expires_at) < :cutoff "
                "AND email NOT LIKE '%@erased.invalid'",
            ),
        ),
        Rule(
            N_("Password reset links (used or expired)"),
            "fixed",
            PASSWORD_RESET_KEPT_DAYS,
            "SELECT COUNT(*), MIN(COALESCE(used_at, expires_at)) FROM password_resets",
            ("DELETE FROM password_resets WHERE COALESCE(used_at, expires_at) < :cutoff",),
        ),
    ]


def purge_personal_data(db: Database, settings, *, now: datetime) -> dict[str, int]:
    """Apply every rule at `now`, in one transaction; returns rows changed per kind."""
    changed = {}
    with db.write() as conn:
        for rule in rules(settings):
            cutoff = clock.iso(now - timedelta(days=rule.days))
            changed[rule.kind] = sum(conn.execute(sa.text(sql), {"cutoff": cutoff}).rowcount for sql in rule.erase)
    return changed


@dataclass(frozen=True)
class LastCopy:
    """Where an erased person's data can still be after the erasure, for the pages to word."""

    on_server: bool  # a libSQL server or Turso keeps history of its own; a local file keeps none
    days: int | None  # the longest it keeps it (DATABASE_HISTORY_DAYS), when the operator said


def last_copy(db: Database, settings) -> LastCopy:
    """docs/deploy.md, "Secrets and erased people": a file overwrites at once (secure_delete);
    a server keeps its log and snapshots until they are purged, Turso its restore window."""
    on_server = not db.is_local_file or db.is_replica
    return LastCopy(on_server=on_server, days=settings.database_history_days if on_server else None)


def holdings(db: Database, settings) -> list[Holding]:
    """What each rule holds now, and when the purge will take the oldest of it."""
    found = []
    with db.read() as conn:
        for rule in rules(settings):
            count, oldest = conn.execute(sa.text(rule.held)).one()
            due = clock.iso(clock.parse(oldest) + timedelta(days=rule.days)) if oldest else None
            found.append(Holding(rule.kind, rule.setting, rule.days, count, oldest, due))
    return found


def retention_task(settings) -> PeriodicTask:
    """Once a day across all workers, like the engine's purge."""

    def purge_once(ctx, now: datetime) -> None:
        changed = purge_personal_data(ctx.db, ctx.settings, now=now)
        log.info("personal data purge: %s", ", ".join(f"{kind}: {n}" for kind, n in changed.items()))

    return PeriodicTask(
        "personal-data-purge",
        settings.relay_interval_seconds,
        purge_once,
        lock_seconds=86400,
        release_after_pass=False,
        first_pass_at_start=False,
    )
