"""Queue names and the envelope: the only things the portal puts on Redis for an email.

The envelope carries no contact details; the consumer reads everything else from the database.
"""

from __future__ import annotations

from redis import Redis
from rq import Queue
from rq.serializers import JSONSerializer

EMAIL_QUEUE = "email"
DEAD_LETTER_QUEUE = "email-dead-letter"
# Campaigns: thousands of messages at once. A worker takes from it only when the transactional
# queue is empty (RQ dequeues from its queues in the order it lists them), so an invitation
# committed mid-campaign waits for at most the deliveries already in flight.
BULK_EMAIL_QUEUE = "email-bulk"
ALL_QUEUES = (EMAIL_QUEUE, DEAD_LETTER_QUEUE, BULK_EMAIL_QUEUE)

ENVELOPE_KIND = "email-outbox"
ENVELOPE_VERSION = 1


def email_queue(redis: Redis) -> Queue:
    return Queue(EMAIL_QUEUE, connection=redis, serializer=JSONSerializer)


def queue_named(redis: Redis, name: str) -> Queue:
    """EMAIL_QUEUE or BULK_EMAIL_QUEUE (the queues deliveries are published to)."""
    if name not in (EMAIL_QUEUE, BULK_EMAIL_QUEUE):
        raise ValueError(f"not a delivery queue: {name}")
    return Queue(name, connection=redis, serializer=JSONSerializer)


def dead_letter_queue(redis: Redis) -> Queue:
    return Queue(DEAD_LETTER_QUEUE, connection=redis, serializer=JSONSerializer)


def build_envelope(outbox_id: str, request_id: str | None = None) -> dict:
    envelope = {"kind": ENVELOPE_KIND, "version": ENVELOPE_VERSION, "outboxId": outbox_id}
    if request_id:
        envelope["telemetry"] = {"requestId": request_id}
    return envelope


def is_valid_envelope(body) -> bool:
    """Is this message ours at all? (Whether a family recognises the ID is a separate question.)"""
    if not isinstance(body, dict):
        return False
    if body.get("kind") != ENVELOPE_KIND or body.get("version") != ENVELOPE_VERSION:
        return False
    outbox_id = body.get("outboxId")
    if not isinstance(outbox_id, str) or not outbox_id or len(outbox_id) > 200:
        return False
    telemetry = body.get("telemetry")
    if telemetry is not None and not isinstance(telemetry, dict):
        return False
    return set(body) <= {"kind", "version", "outboxId", "telemetry"}
