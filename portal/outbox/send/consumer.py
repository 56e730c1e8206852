"""The RQ jobs: one decision per queue message.

Two questions, asked separately: is this message ours at all (a valid envelope), and which
family does its ID belong to? An invalid envelope is acknowledged without touching the database.
A valid one whose ID no family recognises fails its row *before* we acknowledge, so the row never
looks alive after its message is gone; if that write fails, the message is retried.

The job reads the clock once, when it starts; every decision of the delivery is made at that moment.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime, timedelta

from rq import get_current_job

from portal.core import clock
from portal.core.db import DatabaseUnavailable
from portal.core.log_context import envelope_context
from portal.outbox.ground.families import OUTBOX_ID
from portal.outbox.ground.handles import PortalContext
from portal.outbox.ground.queues import EMAIL_QUEUE, dead_letter_queue, is_valid_envelope, queue_named
from portal.outbox.ground.retry import family_max_attempts, family_retry_delay
from portal.outbox.ground.rows import mark_unclaimed_row_failed, row_age_seconds, settle_exhausted
from portal.outbox.send.attempt import NOT_YET_DUE, PAUSED, RATE_WAITED, RETRYING, Way, deliver
from portal.outbox.send.batch import BATCH_OF_ROW, FIRST_ATTEMPT_INPUTS_OF_ROWS_BATCH, EmailList, inputs_of
from portal.outbox.send.freeze import FIRST_ATTEMPT_INPUT
from portal.outbox.send.single import OneEmail
from portal.outbox.write.publish import DEAD_LETTER_FUNCTION, JOB_FUNCTION

# A well-formed ID whose prefix no family here knows may belong to a family a newer deploy added
# (a rolling deploy: new web processes, old workers). It is retried, untouched, for this long
# before it is failed as outbox_id_unclaimed.
UNKNOWN_FAMILY_GRACE_SECONDS = 3600

log = logging.getLogger(__name__)
_context: PortalContext | None = None


def use_context(context: PortalContext | None) -> None:
    """The worker sets its context once at start; jobs read it here."""
    global _context
    _context = context


def _current_context() -> PortalContext:
    if _context is None:
        raise RuntimeError("the outbox worker context is not set; start workers with worker.py")
    return _context


def deliver_outbox_message(envelope) -> str:
    """RQ job on the email queue."""
    job = get_current_job()
    attempt = int(job.meta.get("attempt", 1)) if job else 1
    with envelope_context(envelope):  # log lines carry the request's ID and the row's
        decision = handle_message(_current_context(), envelope, attempt=attempt, dead_letter=False, now=clock.utcnow())
        log.info("delivery %s (attempt %d)", decision, attempt)  # one line per message: what was decided
        return decision


def deliver_dead_letter(envelope) -> str:
    """RQ job on the dead-letter queue: the family's exhausted-delivery handling, then acknowledge."""
    with envelope_context(envelope):
        return handle_message(_current_context(), envelope, attempt=0, dead_letter=True, now=clock.utcnow())


def handle_message(ctx: PortalContext, body, *, attempt: int, dead_letter: bool, now: datetime) -> str:
    """Returns what was decided at `now`; raising makes RQ keep the job as failed (the relay recovers the row)."""
    if not is_valid_envelope(body):
        log.warning("acknowledged an invalid envelope")
        return "ack:invalid_envelope"
    outbox_id = body["outboxId"]
    family = ctx.families.for_outbox_id(outbox_id)
    try:
        if family is None:
            if not dead_letter and _maybe_newer_family(ctx, outbox_id, now):
                schedule_retry(ctx, body, attempt, family_retry_delay(None, attempt, ctx.settings))
                return "retry:unknown_family"
            mark_unclaimed_row_failed(ctx.db, outbox_id, now=now)
            return "ack:outbox_id_unclaimed"
        if dead_letter:
            # Never over a live claim: the holder settles its own attempt.
            settled = settle_exhausted(ctx.db, outbox_id, now=now)
            return "ack:dead_letter" if settled else "ack:dead_letter_not_settled"
        outcome = deliver(ctx, way_for(ctx, outbox_id, family, now=now), family, now=now)
        if outcome.carrier is not None and outcome.carrier != outbox_id:
            # The batch's next try rides on a member still in it (this one may have left).
            body = {**body, "outboxId": outcome.carrier}
        if outcome.kind == NOT_YET_DUE:
            # Not an attempt: the same message, again at the row's retry time.
            schedule_retry(ctx, body, attempt - 1, outcome.delay_seconds, family)
            return "retry:not_yet_due"
        if outcome.kind == RATE_WAITED:
            # Nor is a wait for a rate slot: nothing was sent; it never runs the message out of attempts.
            schedule_retry(ctx, body, attempt - 1, outcome.delay_seconds, family)
            return f"retry:{outcome.detail}"
        if outcome.kind == PAUSED:
            # An operator paused its family: the row waits, parked, and the resume publishes it
            # again (ground/pause.py). No retry is scheduled: the message ends here.
            return f"parked:{outcome.detail}"
        if outcome.kind == RETRYING:
            schedule_retry(ctx, body, max(attempt, outcome.attempt), outcome.delay_seconds, family)
            return f"retry:{outcome.detail}"
        return f"ack:{outcome.detail}"
    except Exception as error:
        # Only the class: messages of database and HTTP errors can carry addresses.
        log.warning("outbox %s attempt %s failed with %s; retrying", outbox_id, attempt, type(error).__name__)
        if dead_letter:
            raise
        if isinstance(error, DatabaseUnavailable):
            # The database was away, which says nothing about the email: the wait is not one of its
            # attempts, so an outage never runs a message into the dead-letter queue.
            schedule_retry(ctx, body, attempt - 1, family_retry_delay(family, attempt, ctx.settings), family)
            return "retry:database_unavailable"
        schedule_retry(ctx, body, attempt, family_retry_delay(family, attempt, ctx.settings), family)
        return f"retry:{type(error).__name__}"


def way_for(ctx: PortalContext, outbox_id: str, family, *, now: datetime) -> Way:
    """How this message is sent: with the batch its row rides in, or alone. One read asks it, with
    what a first attempt renders before its claim (the batch's first request, or the row's input)."""
    values = {"id": outbox_id, "now": clock.iso(now)}
    steps = [(FIRST_ATTEMPT_INPUT, values)]
    if family.batchable:
        steps += [(BATCH_OF_ROW, values), (FIRST_ATTEMPT_INPUTS_OF_ROWS_BATCH, values)]
    found = ctx.db.read_steps(steps)
    batch_id = found[1].scalar() if family.batchable else None
    if batch_id is not None:
        return EmailList(batch_id, tuple(inputs_of(found[2])))
    return OneEmail(outbox_id, found[0].scalar())


def _maybe_newer_family(ctx: PortalContext, outbox_id: str, now: datetime) -> bool:
    if not OUTBOX_ID.match(outbox_id):
        return False
    age = row_age_seconds(ctx.db, outbox_id, now=now)
    return age is not None and age < UNKNOWN_FAMILY_GRACE_SECONDS


def schedule_retry(ctx: PortalContext, body: dict, attempt: int, delay_seconds: float, family=None) -> None:
    """Re-deliver after the delay, or hand the message to the dead-letter queue once the family's
    attempts (or the settings', for a family without its own policy) run out."""
    if attempt >= family_max_attempts(family, ctx.settings):
        dead_letter_queue(ctx.redis).enqueue(
            DEAD_LETTER_FUNCTION, body, job_timeout=ctx.settings.outbox_job_timeout_seconds, failure_ttl=7 * 86400
        )
        return
    # RQ's scheduler keeps whole seconds and may run a job up to a second early: round up, plus
    # one, so the job never arrives before the row's retry time.
    queue_named(ctx.redis, family.queue if family else EMAIL_QUEUE).enqueue_in(
        timedelta(seconds=math.ceil(delay_seconds) + 1),
        JOB_FUNCTION,
        body,
        job_timeout=ctx.settings.outbox_job_timeout_seconds,
        meta={"attempt": attempt + 1},
        failure_ttl=7 * 86400,
    )
