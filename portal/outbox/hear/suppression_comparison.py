"""Resend's suppression list and the portal's, compared once a day; each difference offered to a person.

The webhook keeps the portal's list in step with Resend's as events arrive (suppressions.py:
`follow_provider_list`), but an event can be lost, and either list can be changed by hand. So a pass
reads Resend's whole list through its API (GET /suppressions, a page of PAGE_SIZE at a time, oldest
first, each page after the last ID of the one before) and compares it with the portal's:

- an entry at Resend that the portal's list does not hold: the portal REMOVED it (its audit's last
  change of the entry is a removal), or NEVER had it;
- an entry in the portal's list that Resend does not hold: Resend REMOVED it (an earlier pass found
  it there, or it came from Resend's own suppression.added), or NEVER had it (an admin's addition,
  the portal's own bounce rule).

The differences of the last complete pass are kept (`email_suppression_differences`, with since
when), and every pass, complete or not, is recorded (`email_suppression_passes`). Nothing changes
either list: each difference is an offer for a person on the reconciliation page (`OFFERS`: the
removal on one side offers the removal on the other; an entry only one side ever had offers the
addition on the other), and an offer acted on changes one list, audited with the acting admin in
the suppression list's audit (`email_suppression_events`, `side` naming the list), in the same
transaction that settles the difference; a second try of the same offer finds no difference.

An erased person is on the portal's list as the keyed hash of their address (pseudonyms.py). Each
address Resend lists is hashed with the same key, and matched by the hash where the portal keeps
only the hash, or where the address is an erased person's: such an entry is kept and shown by its
hash alone (the page says "an erased person"), and removed at Resend by Resend's ID for it, never
by the address.

Politely: each page takes a slot of the shared send limit first (rate_limit.py), waiting at most
SLOT_WAIT_SECONDS for it; when none comes (sending has every slot), or the limit cannot be read, or
Resend answers 429, or cannot be reached, the pass stops, is recorded as incomplete with the reason, and the differences of the
last complete pass stay: a partial list would make every entry past it look removed at Resend.

The worker asks every TASK_INTERVAL_SECONDS whether a complete pass ran in the last
COMPARE_EVERY_HOURS, so an incomplete pass is tried again within the hour; `flask outbox
compare-suppressions` runs one now.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from redis.exceptions import RedisError
from resend.exceptions import ResendError

from portal.core import clock
from portal.core.db import Database, json_array
from portal.core.driver import Statement
from portal.core.pseudonyms import pseudonyms_of
from portal.core.text import normalise_email
from portal.outbox.ground.erased import ERASED_PREFIX, address_hash
from portal.outbox.ground.periodic import PeriodicTask
from portal.outbox.hear.lookup import LOOKUP_WAIT_SECONDS
from portal.outbox.hear.receipt_lookup import PROVIDER_BUSY, PROVIDER_UNREACHABLE, SENDING_FIRST, why_unanswered
from portal.outbox.hear.suppressions import (
    ADD,
    ADDED_AT_PROVIDER,
    REMOVE,
    SIDE_PROVIDER,
    add_by_admin,
    audit_by_admin,
    remove_by_admin,
)
from portal.outbox.send.rate_limit import rate_limit_for

log = logging.getLogger("portal.worker")

PAGE_SIZE = 100  # Resend's largest page
MAX_PAGES = 2000  # 200,000 entries: past that, the pass stops (TOO_LONG) rather than crawl on
SLOT_WAIT_SECONDS = 2.0  # a daily pass may wait a little for a slot; sending still comes first
COMPARE_EVERY_HOURS = 24
TASK_INTERVAL_SECONDS = 3600
SHOWN_LIMIT = 200  # differences on the page

# Why a pass stopped before it had Resend's whole list (besides the lookups' PROVIDER_BUSY,
# PROVIDER_UNREACHABLE and SENDING_FIRST, and why_unanswered's provider_error_<status>).
UNREADABLE_ANSWER, TOO_LONG = "unreadable_answer", "too_long"
LIMIT_UNREADABLE = "limit_unreadable"  # the shared send limit (Redis) could not be read: nothing is asked around it
STOPS = (SENDING_FIRST, PROVIDER_BUSY, PROVIDER_UNREACHABLE, UNREADABLE_ANSWER, TOO_LONG, LIMIT_UNREADABLE)

# Which list holds the entry, and why the other does not.
REMOVED_IN_PORTAL, NEVER_IN_PORTAL = "removed_in_portal", "never_in_portal"  # only at Resend
REMOVED_AT_PROVIDER, NEVER_AT_PROVIDER = "removed_at_provider", "never_at_provider"  # only in the portal
CAUSES = (REMOVED_IN_PORTAL, NEVER_IN_PORTAL, REMOVED_AT_PROVIDER, NEVER_AT_PROVIDER)
AT_PROVIDER_ONLY = (REMOVED_IN_PORTAL, NEVER_IN_PORTAL)

# What a person may do about a difference, first the one its cause suggests.
REMOVE_AT_PROVIDER, ADD_TO_PORTAL = "remove_at_provider", "add_to_portal"
REMOVE_FROM_PORTAL, ADD_AT_PROVIDER = "remove_from_portal", "add_at_provider"
OFFERS = {
    REMOVED_IN_PORTAL: (REMOVE_AT_PROVIDER,),
    NEVER_IN_PORTAL: (ADD_TO_PORTAL, REMOVE_AT_PROVIDER),
    REMOVED_AT_PROVIDER: (REMOVE_FROM_PORTAL,),
    NEVER_AT_PROVIDER: (ADD_AT_PROVIDER,),
}
ALL_OFFERS = (REMOVE_AT_PROVIDER, ADD_TO_PORTAL, REMOVE_FROM_PORTAL, ADD_AT_PROVIDER)
# The reason an offer's change keeps in the audit (as the webhook's "added at Resend").
AUDIT_REASONS = {
    REMOVE_AT_PROVIDER: "removed at Resend after the comparison",
    ADD_TO_PORTAL: "at Resend; added here after the comparison",
    REMOVE_FROM_PORTAL: "removed at Resend; removed here after the comparison",
    ADD_AT_PROVIDER: "added at Resend after the comparison",
}
# Why an offer changed nothing (besides the provider's codes, as for a pass).
UNKNOWN_DIFFERENCE, NOT_OFFERED = "unknown_difference", "not_offered"


class DifferenceRefused(ValueError):
    """Nothing was changed; `code` says why (the console words it)."""

    def __init__(self, code: str):
        self.code = code
        super().__init__(code)


# --- the statements ----------------------------------------------------------------------------------

_PORTAL_LIST = Statement("SELECT email, reason, at_provider_seen_at FROM email_suppressions")
# The keys among :keys whose latest audited change was a removal.
_REMOVED_HERE = Statement(
    f"""
    SELECT e.email FROM email_suppression_events e JOIN json_each(:keys) k ON k.value = e.email
    WHERE e.id = (SELECT MAX(id) FROM email_suppression_events WHERE email = e.email AND side = 'portal')
      AND e.action = '{REMOVE}'
    """
)
_DIFFERENCES_BEFORE = Statement("SELECT email, cause, since FROM email_suppression_differences")
_FORGET_DIFFERENCES = Statement("DELETE FROM email_suppression_differences")
_RECORD_DIFFERENCES = Statement(
    """
    INSERT INTO email_suppression_differences (email, cause, provider_id, since, seen_at)
    SELECT value ->> '$[0]', value ->> '$[1]', value ->> '$[2]', value ->> '$[3]', :now FROM json_each(:rows)
    """
)
_SEEN_AT_PROVIDER = Statement(
    "UPDATE email_suppressions SET at_provider_seen_at = :now WHERE email IN (SELECT value FROM json_each(:keys))"
)
_RECORD_PASS = Statement(
    """
    INSERT INTO email_suppression_passes
        (ran_at, stopped, listed, on_both, only_at_provider, only_in_portal)
    VALUES (:ran_at, :stopped, :listed, :on_both, :only_at_provider, :only_in_portal)
    """
)
_LAST_COMPLETE_SINCE = Statement(
    "SELECT 1 FROM email_suppression_passes WHERE stopped IS NULL AND ran_at > :since LIMIT 1"
)
_DIFFERENCE = Statement("SELECT id, email, cause, provider_id FROM email_suppression_differences WHERE id = :id")
# Settles the difference once: the second of two people acting on it finds nothing.
_SETTLE = Statement("DELETE FROM email_suppression_differences WHERE id = :id AND cause = :cause")
_PASS_COLUMNS = "id, ran_at, stopped, listed, on_both, only_at_provider, only_in_portal"
_LAST_PASS = sa.text(f"SELECT {_PASS_COLUMNS} FROM email_suppression_passes ORDER BY ran_at DESC, id DESC LIMIT 1")
_LAST_COMPLETE = sa.text(
    f"SELECT {_PASS_COLUMNS} FROM email_suppression_passes WHERE stopped IS NULL ORDER BY ran_at DESC, id DESC LIMIT 1"
)
_SHOWN_DIFFERENCES = sa.text(
    """
    SELECT id, email, cause, since, seen_at FROM email_suppression_differences
    ORDER BY since DESC, id DESC LIMIT :limit
    """
)
_COUNT_DIFFERENCES = sa.text("SELECT COUNT(*) FROM email_suppression_differences")


# --- the pass ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComparisonPass:
    listed: int  # entries read at Resend
    stopped: str | None  # why the pass ended before Resend's whole list; None: complete
    on_both: int | None = None
    only_at_provider: int | None = None
    only_in_portal: int | None = None

    def summary(self) -> str:
        if self.stopped:
            return f"incomplete: stopped ({self.stopped}) after {self.listed} entries at Resend; differences unchanged"
        return (
            f"{self.listed} at Resend; {self.on_both} on both lists, {self.only_at_provider} only at Resend, "
            f"{self.only_in_portal} only in the portal"
        )


def compare_suppressions(ctx, *, now: datetime) -> ComparisonPass:
    """One pass at `now` (see the module's docstring). `ctx` has db, redis, settings and provider."""
    settings = ctx.settings
    sends = rate_limit_for(ctx.redis, settings.redis_url, settings.resend_rate_limit_per_second)
    entries, stopped = _provider_list(ctx.provider, sends)
    started = clock.iso(now)
    if stopped is not None:
        result = ComparisonPass(len(entries), stopped)
        with ctx.db.write() as conn:
            _record_pass(conn, result, ran_at=started)
        return result
    # Hashed before the write: the write lock is held for the comparison only.
    hashed = {address: address_hash(address, settings.secret_key) for address in entries}
    with ctx.db.write() as conn:
        portal = {row[0]: row for row in _PORTAL_LIST(conn, {}).all()}
        erased = pseudonyms_of(conn, list(entries), settings.secret_key)
        at_provider: dict[str, str] = {}  # the portal's key of each entry at Resend: Resend's ID
        for address, provider_id in entries.items():
            key = address if address in portal else hashed[address]
            at_provider[key if key in portal or address in erased else address] = provider_id
        only_there = [key for key in at_provider if key not in portal]
        only_here = [key for key in portal if key not in at_provider]
        removed_here = {row[0] for row in _REMOVED_HERE(conn, {"keys": json_array(only_there)}).all()}
        before = {row[0]: (row[1], row[2]) for row in _DIFFERENCES_BEFORE(conn, {}).all()}
        rows = []
        for key in only_there:
            cause = REMOVED_IN_PORTAL if key in removed_here else NEVER_IN_PORTAL
            rows.append([key, cause, at_provider[key], _since(before, key, cause, started)])
        for key in only_here:
            _email, reason, seen_there = portal[key]
            cause = REMOVED_AT_PROVIDER if seen_there or reason == ADDED_AT_PROVIDER else NEVER_AT_PROVIDER
            rows.append([key, cause, None, _since(before, key, cause, started)])
        _FORGET_DIFFERENCES(conn, {})
        _RECORD_DIFFERENCES(conn, {"rows": json_array(rows), "now": started})
        on_both = [key for key in at_provider if key in portal]
        _SEEN_AT_PROVIDER(conn, {"keys": json_array(on_both), "now": started})
        result = ComparisonPass(len(entries), None, len(on_both), len(only_there), len(only_here))
        _record_pass(conn, result, ran_at=started)
    return result


def _since(before: dict, key: str, cause: str, now: str) -> str:
    """When the difference was first found: a pass that finds the same one again keeps its start."""
    found = before.get(key)
    return found[1] if found and found[0] == cause else now


def _record_pass(conn, result: ComparisonPass, *, ran_at: str) -> None:
    _RECORD_PASS(
        conn,
        {
            "ran_at": ran_at,
            "stopped": result.stopped,
            "listed": result.listed,
            "on_both": result.on_both,
            "only_at_provider": result.only_at_provider,
            "only_in_portal": result.only_in_portal,
        },
    )


def _provider_list(provider, sends) -> tuple[dict[str, str], str | None]:
    """Resend's list as {address: its ID}, and why it stopped short (None: the whole list)."""
    entries: dict[str, str] = {}
    after = None
    for _ in range(MAX_PAGES):
        try:
            if not sends.acquire(time.monotonic() + SLOT_WAIT_SECONDS):
                return entries, SENDING_FIRST
        except RedisError:
            return entries, LIMIT_UNREADABLE
        try:
            page = provider.list_suppressions(limit=PAGE_SIZE, after=after)
        except (ResendError, RuntimeError) as error:
            return entries, why_unanswered(error)
        data = page.get("data")
        if not isinstance(data, list) or not all(_readable(item) for item in data):
            return entries, UNREADABLE_ANSWER
        for item in data:
            entries[normalise_email(item["email"])] = item["id"]
        if not page.get("has_more") or not data:
            return entries, None
        after = data[-1]["id"]
    return entries, TOO_LONG


def _readable(item) -> bool:
    return isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("email"), str)


def comparison_due(db: Database, *, now: datetime) -> bool:
    """True unless a complete pass started in the last COMPARE_EVERY_HOURS."""
    since = clock.iso(now - timedelta(hours=COMPARE_EVERY_HOURS))
    with db.read() as conn:
        return _LAST_COMPLETE_SINCE(conn, {"since": since}).first() is None


def comparison_task(settings) -> PeriodicTask:
    """The pass as the worker runs it: every hour one worker asks whether a complete pass ran in the
    last day, and runs one if not; the lock, left to expire, keeps the others from asking that hour."""
    return PeriodicTask(
        "suppression-comparison",
        TASK_INTERVAL_SECONDS,
        _compare_if_due,
        lock_seconds=TASK_INTERVAL_SECONDS,
        release_after_pass=False,
        first_pass_at_start=True,
    )


def _compare_if_due(ctx, now: datetime) -> None:
    if comparison_due(ctx.db, now=now):
        log.info("suppression comparison: %s", compare_suppressions(ctx, now=now).summary())


# --- what the page shows -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    id: int
    email: str | None  # None: an erased person's (the portal keeps only a hash)
    cause: str
    offers: tuple[str, ...]
    since: str
    seen_at: str


@dataclass(frozen=True)
class Comparison:
    last: dict | None  # the last pass, complete or not
    complete: dict | None  # the last complete pass, whose differences these are
    differences: list[Difference]  # the newest SHOWN_LIMIT
    difference_count: int


def offers_for(email: str, cause: str) -> tuple[str, ...]:
    """What may be done about a difference. An entry only in the portal under an erased person's
    hash cannot be added at Resend: the portal does not know the address."""
    if cause == NEVER_AT_PROVIDER and email.startswith(ERASED_PREFIX):
        return ()
    return OFFERS[cause]


def comparison(db: Database, limit: int = SHOWN_LIMIT) -> Comparison:
    with db.read() as conn:
        last = conn.execute(_LAST_PASS).mappings().first()
        complete = conn.execute(_LAST_COMPLETE).mappings().first()
        rows = conn.execute(_SHOWN_DIFFERENCES, {"limit": limit}).all()
        count = conn.execute(_COUNT_DIFFERENCES).scalar()
    differences = [
        Difference(
            id=row.id,
            email=None if row.email.startswith(ERASED_PREFIX) else row.email,
            cause=row.cause,
            offers=offers_for(row.email, row.cause),
            since=row.since,
            seen_at=row.seen_at,
        )
        for row in rows
    ]
    return Comparison(
        last=dict(last) if last else None,
        complete=dict(complete) if complete else None,
        differences=differences,
        difference_count=count,
    )


# --- a person's offer, acted on ----------------------------------------------------------------------


@dataclass(frozen=True)
class OfferDone:
    offer: str
    email: str | None  # None: an erased person's


def act_on_difference(handles, *, difference_id: int, offer: str, actor_user_id: int, now: datetime) -> OfferDone:
    """Act on one offer of one difference at `now`: change one list, audited, and settle the
    difference, once. Raises DifferenceRefused, with nothing changed, for an unknown difference, an
    offer it does not make, or a provider that did not answer. `handles` has db, redis, settings and
    provider (a PortalContext)."""
    with handles.db.read() as conn:
        row = _DIFFERENCE(conn, {"id": difference_id}).first()
    if row is None:
        raise DifferenceRefused(UNKNOWN_DIFFERENCE)
    _id, email, cause, provider_id = row
    if offer not in offers_for(email, cause):
        raise DifferenceRefused(NOT_OFFERED)
    if offer in (REMOVE_AT_PROVIDER, ADD_AT_PROVIDER):
        _change_at_provider(handles, offer, email=email, provider_id=provider_id)
    at, reason = clock.iso(now), AUDIT_REASONS[offer]
    with handles.db.write() as conn:
        if not _SETTLE(conn, {"id": difference_id, "cause": cause}).rowcount:
            raise DifferenceRefused(UNKNOWN_DIFFERENCE)  # another person acted on it meanwhile
        change = {"email": email, "reason": reason, "actor_user_id": actor_user_id, "now": at}
        if offer == ADD_TO_PORTAL:
            add_by_admin(conn, **change)
        elif offer == REMOVE_FROM_PORTAL:
            remove_by_admin(conn, **change)
        else:
            audit_by_admin(conn, action=REMOVE if offer == REMOVE_AT_PROVIDER else ADD, side=SIDE_PROVIDER, **change)
    return OfferDone(offer, None if email.startswith(ERASED_PREFIX) else email)


def _change_at_provider(handles, offer: str, *, email: str, provider_id: str | None) -> None:
    """Remove Resend's entry by its ID, or add the address; a removal Resend no longer needs (its
    entry is gone) is done. Raises DifferenceRefused when Resend did not answer."""
    settings = handles.settings
    sends = rate_limit_for(handles.redis, settings.redis_url, settings.resend_rate_limit_per_second)
    try:
        if not sends.acquire(time.monotonic() + LOOKUP_WAIT_SECONDS):
            raise DifferenceRefused(PROVIDER_BUSY)
    except RedisError:
        raise DifferenceRefused(LIMIT_UNREADABLE) from None
    try:
        if offer == REMOVE_AT_PROVIDER:
            handles.provider.remove_suppression(provider_id)
        else:
            handles.provider.add_suppression(email)
    except (ResendError, RuntimeError) as error:
        why = why_unanswered(error)
        if not (offer == REMOVE_AT_PROVIDER and why == "not_found"):
            raise DifferenceRefused(why) from None
