"""An operator pauses sending (all of it, or one family) and resumes it, each with a reason on record.

The switch is ground/pause.py's (in Redis, read by every worker before every request); each turn of
it is audited in `email_sending_pauses` (who, why, when), written first: a pause that is not on
record is not set. A pause returns once it is *confirmed*: the switch is set and every request that
passed the gate before it has been answered, so from then on no request of a paused family leaves.

A resume ends one pause and publishes again the messages parked under it, transactional (the
email queue) before campaigns (the bulk queue), each in the order they were parked; a message whose
family another pause still holds stays parked. Each row is delivered once: the claim decides, as
for every message, should a row be parked twice (the relay republished it during a long pause).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.i18n import N_
from portal.outbox.ground import pause
from portal.outbox.ground.pause import ALL, Pause, pauses
from portal.outbox.ground.queues import queue_named
from portal.outbox.operate.actions import REASON_MAX, ActionRefused
from portal.outbox.write.publish import enqueue_envelopes

PAUSE, RESUME = "pause", "resume"
_RECORD = sa.text(
    "INSERT INTO email_sending_pauses (scope, action, actor_user_id, reason, at)"
    " VALUES (:scope, :action, :actor, :reason, :at)"
)


_ACTORS = sa.text("SELECT id, email FROM users WHERE id IN (SELECT value FROM json_each(:ids))")


@dataclass(frozen=True)
class ShownPause:
    """A pause as the console shows it: with the acting admin's address (None: the command line)."""

    scope: str
    actor: str | None
    actor_user_id: int | None
    reason: str
    at: str


def shown_pauses(handles) -> list[ShownPause]:
    """Every pause that holds now, with who set it."""
    held = pauses(handles.redis)
    ids = [held_pause.actor_user_id for held_pause in held if held_pause.actor_user_id is not None]
    actors = {}
    if ids:
        with handles.db.read() as conn:
            actors = {row.id: row.email for row in conn.execute(_ACTORS, {"ids": json.dumps(ids)})}
    return [ShownPause(p.scope, actors.get(p.actor_user_id), p.actor_user_id, p.reason, p.at) for p in held]


@dataclass(frozen=True)
class PauseResult:
    scope: str
    confirmed: bool  # pause: no request of the scope can still leave; resume: always True
    published: int = 0  # resume: parked messages published again


def _checked(handles, family: str | None, reason: str) -> tuple[str, str]:
    reason = (reason or "").strip()
    if not reason:
        raise ActionRefused(N_("Say why: the reason is kept with the action."))
    if len(reason) > REASON_MAX:
        raise ActionRefused(N_("Keep the reason under 500 characters."))
    family = (family or "").strip() or None
    if family is not None and family not in {known.name for known in handles.families}:
        raise ActionRefused(N_("Choose one of the email families offered."))
    return family or ALL, reason


def _record(handles, scope: str, action: str, actor_user_id: int | None, reason: str, at: str) -> None:
    with handles.db.write() as conn:
        conn.execute(_RECORD, {"scope": scope, "action": action, "actor": actor_user_id, "reason": reason, "at": at})


def pause_sending(handles, *, family: str | None, reason: str, actor_user_id: int | None, now: datetime) -> PauseResult:
    """Pause all sending (`family` None) or one family at `now`; returns once confirmed (or once
    the wait for requests already out ran past the provider's timeout: `confirmed` False).
    Raises ActionRefused, nothing changed, on bad input or a scope already paused."""
    scope, reason = _checked(handles, family, reason)
    if any(held.scope == scope for held in pauses(handles.redis)):
        raise ActionRefused(N_("Sending is already paused there."))
    at = clock.iso(now)
    _record(handles, scope, PAUSE, actor_user_id, reason, at)
    pause.set_pause(handles.redis, Pause(scope, actor_user_id, reason, at))
    timeout = handles.settings.provider_timeout_seconds + pause.PASSING_MARGIN_SECONDS
    return PauseResult(scope, confirmed=pause.settle(handles.redis, timeout))


def resume_sending(
    handles, *, family: str | None, reason: str, actor_user_id: int | None, now: datetime
) -> PauseResult:
    """End the pause of all sending (`family` None) or of one family, and publish what it parked.
    Raises ActionRefused, nothing changed, on bad input or when that scope is not paused."""
    scope, reason = _checked(handles, family, reason)
    if not any(held.scope == scope for held in pauses(handles.redis)):
        raise ActionRefused(N_("Sending is not paused there."))
    _record(handles, scope, RESUME, actor_user_id, reason, clock.iso(now))
    pause.clear_pause(handles.redis, scope)
    return PauseResult(scope, confirmed=True, published=publish_parked(handles))


def publish_parked(handles) -> int:
    """Publish every parked message no pause holds any longer: the email queue's first, then the
    bulk queue's, each in the order parked. Returns how many."""
    published = 0
    for queue in pause.RESUME_ORDER:
        free = []
        for outbox_id in pause.parked(handles.redis, queue):
            family = handles.families.for_outbox_id(outbox_id)
            if family is None or not pause.holds_for(handles.redis, family.name):
                free.append(outbox_id)
        if free:
            enqueue_envelopes(
                queue_named(handles.redis, queue), free, "resume", handles.settings.outbox_job_timeout_seconds
            )
            pause.unpark(handles.redis, queue, free)
            published += len(free)
    return published
