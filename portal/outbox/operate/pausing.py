"""An operator pauses sending (all of it, or one family) and resumes it, each with a reason on record.

The switch is ground/pause.py's: recorded in `email_sending_pauses` (who, why, when), written
first, and set in Redis, where every worker's slot script reads it. A pause returns once it is
*confirmed*: the switch is set and every delivery that took its slot before it has ended, so from
then on no request of a paused family leaves.

A resume, in one write, records itself and makes due every parked row that no other pause still
holds; then it clears the switch, and publishes those rows: transactional email (the email queue)
before campaigns (the bulk queue), each in the order the rows were written. A row published twice
(the relay's republication of a long pause met the resume) is delivered once: the claim decides.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.i18n import N_
from portal.outbox.ground import pause, rows
from portal.outbox.ground.pause import ALL, PAUSE, RESUME, Pause, pauses
from portal.outbox.ground.queues import EMAIL_QUEUE
from portal.outbox.operate.actions import REASON_MAX, ActionRefused
from portal.outbox.write.publish import publish_outbox_rows

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
    published: int = 0  # resume: parked emails published again


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


def _record(scope: str, action: str, actor_user_id: int | None, reason: str, at: str) -> dict:
    return {"scope": scope, "action": action, "actor": actor_user_id, "reason": reason, "at": at}


def pause_sending(handles, *, family: str | None, reason: str, actor_user_id: int | None, now: datetime) -> PauseResult:
    """Pause all sending (`family` None) or one family at `now`; returns once confirmed (or once
    the wait for requests already out ran past the provider's timeout: `confirmed` False).
    Raises ActionRefused, nothing changed, on bad input or a scope already paused."""
    scope, reason = _checked(handles, family, reason)
    if any(held.scope == scope for held in pauses(handles.redis)):
        raise ActionRefused(N_("Sending is already paused there."))
    at = clock.iso(now)
    with handles.db.write() as conn:
        conn.execute(pause.RECORD, _record(scope, PAUSE, actor_user_id, reason, at))
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
    with handles.db.write() as conn:
        conn.execute(pause.RECORD, _record(scope, RESUME, actor_user_id, reason, clock.iso(now)))
        still = [held.scope for held in pause.recorded_pauses(conn)]
        values = rows.parked_values([s for s in still if s != ALL], ALL in still, now=now)
        free = conn.execute(rows.PARKED_FREE, values).all()
        conn.execute(rows.UNPARK, values)
    pause.clear_pause(handles.redis, scope)
    transactional = [row.id for row in free if handles.families.queue_for(row.id) == EMAIL_QUEUE]
    broadcast = [row.id for row in free if handles.families.queue_for(row.id) != EMAIL_QUEUE]
    for ids in (transactional, broadcast):  # campaigns wait for transactional email
        publish_outbox_rows(
            handles.db,
            handles.redis,
            ids,
            request_id="resume",
            job_timeout=handles.settings.outbox_job_timeout_seconds,
            families=handles.families,
            batch_size=handles.settings.outbox_batch_size,
            now=now,
        )
    return PauseResult(scope, confirmed=True, published=len(free))
