"""The console's words for what the engine records, in the page's language: statuses, an email's
history, the retention glance, a batch request's answer and the engine's refusals.

The engine hands out codes and their values (portal/outbox/operate/events.py: an entry's kind, its attempt,
statuses, reason code, times); the words are here, one translatable message per code with named
placeholders, as notifications-admin's app/formatters.py words a notification's status. Every kind
of history entry the engine can produce has its words: the asserts below fail at import when one
has none, and tests/console/test_history_words.py drives the engine through every kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from flask_babel import gettext as _

from portal.core import clock, i18n
from portal.core.i18n import N_
from portal.core.periods import report_timezone
from portal.outbox.ground.statuses import (
    BOUNCE_CLASSES,
    BOUNCED,
    CANCELLED,
    COMPLAINED,
    DEAD_LETTER,
    DELIVERED,
    DELIVERY_EXHAUSTED,
    ENQUEUED,
    FAILED,
    PENDING,
    PROCESSING,
    REQUEST_ACCEPTED,
    RETRY,
    SENT,
    SUPPRESSED,
    UNKNOWN_OUTCOME,
    is_soft_bounce,
)
from portal.outbox.operate.operator import ALL_SENDING, TimelineEntry, events
from portal.outbox.operate.operator import suppression_comparison as comparing
from portal.web.extensions import portal_context
from portal.web.i18n import current_language

# A status as a person reads it (English: the status with spaces).
STATUS_WORDS = {
    PENDING: N_("pending"),
    ENQUEUED: N_("enqueued"),
    PROCESSING: N_("processing"),
    RETRY: N_("retry"),
    SENT: N_("sent"),
    DELIVERED: N_("delivered"),
    BOUNCED: N_("bounced"),
    COMPLAINED: N_("complained"),
    FAILED: N_("failed"),
    SUPPRESSED: N_("suppressed"),
    DEAD_LETTER: N_("dead letter"),
    CANCELLED: N_("cancelled"),
}


# An email family as a person reads it (English: the family's name with spaces). Every family the
# portal sends has words here: tests/console/test_family_words.py holds the list to portal/email_families.py.
FAMILY_WORDS = {
    "invitation": N_("invitation"),
    "manager_invitation": N_("manager invitation"),
    "application_received": N_("application received"),
    "application_decision": N_("application decision"),
    "application_notification": N_("application notification"),
    "demo_confirmation": N_("demo confirmation"),
    "demo_notification": N_("demo notification"),
    "notice": N_("notice"),
    "report": N_("report"),
    "password_reset": N_("password reset"),
    "campaign": N_("campaign"),
    "campaign_test": N_("campaign test"),
}


def family_word(family: str | None) -> str:
    if family in FAMILY_WORDS:
        return _(FAMILY_WORDS[family])
    return (family or "").replace("_", " ")


def status_word(status: str | None) -> str:
    if status in STATUS_WORDS:
        return _(STATUS_WORDS[status])
    return (status or "").replace("_", " ")


def engine_text(text: str | None) -> str:
    """A constant the engine marked with N_ (a refusal's message), in the page's language."""
    if not text:
        return text or ""  # never look up "": gettext answers it with the catalogue's header
    return _(text)


# --- an email's history ----------------------------------------------------------------------------

# Each kind's headline, with named placeholders for its values: attempt (a number), status, before
# and after (status words).
TITLES = {
    events.WRITTEN: N_("Written, waiting to be sent"),
    events.WRITTEN_AND_QUEUED: N_("Written and queued for sending"),
    events.WRITTEN_TO_SEND_AGAIN: N_("Written by an operator to send again an email whose outcome was unknown"),
    events.QUEUED: N_("Queued for sending"),
    events.NOT_QUEUED: N_("Not queued yet; it will be queued again by itself"),
    events.QUEUED_AGAIN: N_("Queued again"),
    events.BEING_SENT: N_("Being sent (attempt %(attempt)d)"),
    events.CONTENT_FIXED: N_("Content fixed for sending"),
    events.SENDING_AGAIN: N_("Sending again (attempt %(attempt)d): the attempt before stopped without an answer"),
    events.REQUEUED_AFTER_STOP: N_("Queued again: an attempt stopped without an answer"),
    events.WILL_RETRY: N_("Not sent this time; it will be tried again"),
    events.QUEUED_FOR_NEXT_ATTEMPT: N_("Queued for its next attempt"),
    events.RETRY_TIME_CHANGED: N_("Retry time changed"),
    events.ACCEPTED: N_("Handed to Resend"),
    events.STATUS_FROM_RECEIPT: N_("Status now %(status)s"),
    events.NOT_SENT_FAILED: N_("Failed: nothing was sent"),
    events.NOT_SENT_SUPPRESSED: N_("Not sent: the address is suppressed"),
    events.DEAD_LETTERED: N_("Dead letter: needs a person"),
    events.MARKED_SENT_AGAIN: N_("Marked as sent again"),
    events.CANCELLED_BEFORE_ATTEMPT: N_("Cancelled before any attempt"),
    events.RETRIED_BY_OPERATOR: N_("Retried by an operator"),
    events.CONFIRMED_BY_OPERATOR: N_("Confirmed as sent by an operator"),
    events.SENT_AGAIN_BY_OPERATOR: N_("Sent again as a new email by an operator"),
    events.CANCELLED_BY_OPERATOR: N_("Cancelled by an operator"),
    events.ERASED: N_("Recipient and content erased (retention)"),
    events.RECEIPT: N_("Receipt from Resend: %(type)s"),  # a type with no words of its own (RECEIPT_TITLES)
    events.SUPPRESSION_ADDED: N_("Address added to the suppression list"),
    events.SUPPRESSION_REMOVED: N_("Address removed from the suppression list"),
    events.STATUS_CHANGED: N_("Status: %(before)s → %(after)s"),
    events.UPDATED: N_("Updated"),
}
assert set(TITLES) == set(events.KINDS), f"history kinds without words: {set(events.KINDS) - set(TITLES)}"

# The badge's colour: "ok", "warn" or "bad" ("" none). A receipt's depends on its type, a status
# a receipt set on the status (_tone).
TONES = {
    events.NOT_QUEUED: "warn",
    events.SENDING_AGAIN: "warn",
    events.REQUEUED_AFTER_STOP: "warn",
    events.WILL_RETRY: "warn",
    events.ACCEPTED: "ok",
    events.NOT_SENT_FAILED: "bad",
    events.NOT_SENT_SUPPRESSED: "bad",
    events.DEAD_LETTERED: "warn",
    events.MARKED_SENT_AGAIN: "warn",
    events.CANCELLED_BEFORE_ATTEMPT: "warn",
    events.RETRIED_BY_OPERATOR: "warn",
    events.CONFIRMED_BY_OPERATOR: "warn",
    events.SENT_AGAIN_BY_OPERATOR: "warn",
    events.CANCELLED_BY_OPERATOR: "warn",
    events.WRITTEN_TO_SEND_AGAIN: "warn",
    events.SUPPRESSION_ADDED: "warn",
}
BAD_RECEIPTS = ("email.bounced", "email.complained", "email.failed")

# What the link to a related email is called.
RELATED = {
    events.SENT_AGAIN_BY_OPERATOR: N_("The new email"),
    events.WRITTEN_TO_SEND_AGAIN: N_("The email it replaces"),
}
RELATED_EMAIL = N_("The related email")

# A receipt, in words for an admin (its type stays in the technical detail).
RECEIPT_TITLES = {
    "email.sent": N_("Resend confirmed it sent the email"),
    "email.delivered": N_("Delivered to the recipient's server"),
    "email.delivery_delayed": N_("Delivery delayed: the recipient's server has not taken it yet"),
    "email.bounced": N_("Bounced: the recipient's server refused it"),
    "email.complained": N_("Marked as spam by the recipient"),
    "email.opened": N_("Opened by the recipient"),
    "email.clicked": N_("A link in it was followed"),
    "email.failed": N_("Resend could not send it"),
}
FROM_LOOKUP = N_("%(event)s (learned by asking Resend)")
# A bounce, by its class (the engine's codes: portal/outbox/ground/bounce_classes.py).
BOUNCE_TITLES = {
    "no_mailbox": N_("Bounced: the mailbox does not exist"),
    "mailbox_full": N_("Bounced: the mailbox is full"),
    "blocked": N_("Bounced: blocked by the receiving server"),
    "spam": N_("Bounced: the message was rejected as spam"),
    "temporary": N_("Bounced: a temporary failure"),
}
assert set(BOUNCE_TITLES) == set(BOUNCE_CLASSES)

# What a reason code (the engine's last_error, up to its ':') meant for the email; a code with no
# words here shows only as stored, in the line above it.
REASONS = {
    "provider_error": N_("the provider failed (5xx): retried; it may have sent the email"),
    "transport_failure": N_("no answer reached us: retried; the provider may have sent the email"),
    "provider_answer_without_id": N_("an answer without a message ID: retried; it may have been sent"),
    "provider_answer_ids_mismatch": N_(
        "an answer whose message IDs did not match the batch: retried; it may have been sent"
    ),
    "rate_limited": N_("rate limited (429): nothing was sent; retried after the pause"),
    "rate_limit_wait": N_("rate limited (429): nothing was sent; retried after the pause"),
    "concurrent_idempotent_requests": N_("another request with the same key was in flight (409): retried"),
    "provider_rejected": N_("refused by the provider: nothing was sent"),
    "invalid_idempotent_request": N_("the key was used with another payload (409): the outcome is unknown"),
    UNKNOWN_OUTCOME: N_("an earlier attempt may have gone out, and the provider's window to tell is over or closing"),
    "error": N_("failed before reaching the provider: nothing was sent; retried"),
    "recipient_suppressed": N_("the address is on the suppression list: nothing was sent"),
    DELIVERY_EXHAUSTED: N_("the queue gave up on it after its last delivery: a person decides"),
    "outbox_id_unclaimed": N_("no kind of email here knows its ID: nothing was sent"),
    "campaign_cancelled": N_("the campaign was cancelled"),
    "recipient_unsubscribed": N_("the recipient unsubscribed"),
    "recipient_erased": N_("the recipient's personal data was erased"),
    "sending_paused": N_("an operator paused sending: nothing was sent; it goes once sending is resumed"),
}


@dataclass(frozen=True)
class Entry:
    """One entry of an email's history, as the page shows it."""

    display_at: str
    title: str
    tone: str = ""
    details: list[str] = field(default_factory=list)  # the technical detail, one line each
    actor: str | None = None
    reason: str | None = None  # a person's own words
    related_outbox_id: str | None = None
    related_label: str = ""


def history(timeline: list[TimelineEntry]) -> list[Entry]:
    """The engine's timeline, worded in the page's language."""
    return [
        Entry(
            display_at=history_time(entry.at),
            title=title(entry),
            tone=_tone(entry),
            details=details(entry),
            actor=entry.actor if entry.kind not in (events.SUPPRESSION_ADDED, events.SUPPRESSION_REMOVED) else None,
            reason=entry.note,
            related_outbox_id=entry.related_outbox_id,
            related_label=_(RELATED.get(entry.kind, RELATED_EMAIL)),
        )
        for entry in timeline
    ]


def title(entry: TimelineEntry) -> str:
    if entry.kind == events.RECEIPT:
        headline = (
            _(BOUNCE_TITLES[entry.bounce_class])
            if entry.bounce_class in BOUNCE_TITLES
            else _(RECEIPT_TITLES[entry.receipt_type])
            if entry.receipt_type in RECEIPT_TITLES
            else _(TITLES[events.RECEIPT], type=entry.receipt_type)
        )
        return _(FROM_LOOKUP, event=headline) if entry.from_lookup else headline
    return _(
        TITLES[entry.kind],
        attempt=entry.attempt or 0,
        status=status_word(entry.status),
        before=status_word(entry.status_before),
        after=status_word(entry.status),
    )


def _tone(entry: TimelineEntry) -> str:
    if entry.kind == events.RECEIPT:
        return "bad" if entry.receipt_type in BAD_RECEIPTS else "ok"
    if entry.kind == events.STATUS_FROM_RECEIPT:
        return "bad" if entry.status in (BOUNCED, COMPLAINED) else "ok"
    return TONES.get(entry.kind, "")


def details(entry: TimelineEntry) -> list[str]:
    """The technical detail: what the engine did, with its codes (statuses, reasons) as it stores them."""
    kind, attempt = entry.kind, entry.attempt or 0
    may_have_gone = [_("an attempt may have reached the provider")] if entry.outcome_unknown else []
    frozen = _("payload frozen: the first request to the provider follows")
    if kind in (events.WRITTEN, events.WRITTEN_AND_QUEUED):
        return [_("committed to the outbox; status: %(status)s", status=entry.status)]
    if kind == events.ERASED:
        return [_("the status and times stay")]
    if kind in events.BY_OPERATOR.values() or kind == events.WRITTEN_TO_SEND_AGAIN:
        lines = [
            _("status: %(before)s → %(after)s", before=entry.status_before, after=entry.status)
            if entry.status_before
            else _("status: %(status)s", status=entry.status)
        ]
        if entry.message_id:
            lines.append(_("provider message ID: %(id)s", id=entry.message_id))
        return lines
    if kind == events.RECEIPT:
        receipt = (
            _("receipt %(type)s, from a lookup", type=entry.receipt_type)
            if entry.from_lookup
            else _("receipt %(type)s", type=entry.receipt_type)
        )
        outcome = entry.receipt_outcome or _("not yet processed")
        soft = (
            [_("bounce class: %(code)s (soft: suppresses as the second within 30 days)", code=entry.bounce_class)]
            if is_soft_bounce(entry.bounce_class)
            else [_("bounce class: %(code)s", code=entry.bounce_class)]
            if entry.bounce_class
            else []
        )
        return [receipt, _("applied as: %(outcome)s", outcome=outcome), *soft]
    if kind in (events.SUPPRESSION_ADDED, events.SUPPRESSION_REMOVED):
        who = _("the email provider") if entry.by_provider else entry.actor or _("an admin")
        return [_("by %(who)s", who=who)]
    if kind == events.CONTENT_FIXED:
        return [frozen]
    if kind == events.REQUEUED_AFTER_STOP:
        return [_("republished by the relay: claim expired")]
    if kind == events.SENDING_AGAIN:
        return [_("claim expired; claimed again"), *may_have_gone]
    if kind == events.BEING_SENT:
        return [_("claimed by a worker"), *([frozen] if entry.content_fixed else [])]
    if kind == events.ACCEPTED:
        return [_("accepted at attempt %(attempt)d", attempt=attempt), _("message ID %(id)s", id=entry.message_id)]
    if kind == events.STATUS_FROM_RECEIPT:
        return [_("from a receipt")]
    next_attempt = (
        [_("next attempt at %(time)s", time=history_time(entry.next_attempt_at))] if entry.next_attempt_at else []
    )
    if kind == events.WILL_RETRY:
        stored = _("attempt %(attempt)d: %(error)s", attempt=attempt, error=entry.error or "retry")
        return [stored, *_meant(entry), *next_attempt]
    if kind == events.QUEUED_FOR_NEXT_ATTEMPT:
        return [_("republished by the relay after attempt %(attempt)d", attempt=attempt)]
    if kind == events.RETRY_TIME_CHANGED:
        return next_attempt
    if kind == events.NOT_QUEUED:
        return [entry.error or ""]
    if kind == events.QUEUED:
        return [_("published to the queue")]
    if kind == events.QUEUED_AGAIN:
        return [_("republished by the relay")]
    if kind in (
        events.NOT_SENT_FAILED,
        events.NOT_SENT_SUPPRESSED,
        events.DEAD_LETTERED,
        events.MARKED_SENT_AGAIN,
        events.CANCELLED_BEFORE_ATTEMPT,
    ):
        stored = (
            _("attempt %(attempt)d: %(error)s", attempt=attempt, error=entry.error) if attempt else entry.error or ""
        )
        return [line for line in (stored, *_meant(entry), *may_have_gone) if line]
    return [entry.error] if entry.error else []


def _meant(entry: TimelineEntry) -> list[str]:
    return [_(REASONS[entry.reason])] if entry.reason in REASONS else []


def history_time(at: str | None, fallback: str = "") -> str:
    """A stored time to the second, as a history shows it: 3 Dec 2026, 14:05:09 UTC (3. des. 2026 …)."""
    try:
        return _second(clock.parse(at or ""))
    except (ValueError, TypeError):
        return fallback or at or ""


def _second(moment: datetime) -> str:
    """In the portal's zone, as every time of the console (the `date_time` filter's), named:
    3 Dec 2026, 15:05:09 CET."""
    moment = moment.astimezone(report_timezone(portal_context().settings))
    return f"{i18n.day(moment.date(), current_language())}, {moment:%H:%M:%S} {moment.tzname()}"


def times_stated() -> str:
    """The one zone of every time in the console, said once on each of its pages."""
    return _("All times are in the portal’s time zone, %(zone)s.", zone=portal_context().settings.portal_timezone)


# --- what an email waits for, and why it cannot be retried --------------------------------------------

# What a waiting email waits for, by the code the engine left on it (its last_error's reason code,
# or a pause that holds its family): a short phrase for the list, a sentence for its page, whose
# placeholder `time` is the next attempt (the provider's asked time, for a 429).
PAUSED_BY_OPERATOR, PROVIDER_ASKED, RATE_SLOT, NEXT_ATTEMPT, IN_QUEUE, BEING_SENT = (
    "paused",
    "provider_asked",
    "rate_slot",
    "next_attempt",
    "in_queue",
    "being_sent",
)
WAITING_SHORT = {
    PAUSED_BY_OPERATOR: N_("paused by an operator"),
    PROVIDER_ASKED: N_("the provider asked us to wait"),
    RATE_SLOT: N_("waiting for a rate slot"),
    NEXT_ATTEMPT: N_("waiting for its next attempt"),
    IN_QUEUE: N_("waiting in the queue"),
    BEING_SENT: N_("being sent now"),
}
WAITING_LONG = {
    PROVIDER_ASKED: N_(
        "Waiting: the provider asked us to wait (429, too many requests) until %(time)s. Nothing was sent; "
        "it is tried again then, under the same key."
    ),
    RATE_SLOT: N_(
        "Waiting for a rate slot: the portal sends at most %(limit)d requests a second to the provider, and every "
        "slot was taken. Nothing was sent; the next try is at %(time)s."
    ),
    NEXT_ATTEMPT: N_("Waiting for its next attempt, at %(time)s."),
    IN_QUEUE: N_("Waiting in the queue for a worker: it goes as soon as one is free."),
    BEING_SENT: N_("Being sent now: a worker holds it, and its page changes once the provider answers."),
}
assert set(WAITING_LONG) | {PAUSED_BY_OPERATOR} == set(WAITING_SHORT)
# An operator's pause holds it; `what`, `who`, `time` and `reason` are the pause's.
PAUSED_LONG = N_(
    "Paused by an operator: %(who)s paused %(what)s, %(time)s (“%(reason)s”). It keeps its place and goes "
    "once sending is resumed."
)


def waiting_code(row: dict, pauses) -> str | None:
    """What a waiting or processing row waits for, as a code of WAITING_SHORT; None for a settled row."""
    if row["status"] == PROCESSING:
        return BEING_SENT
    if row["status"] not in (PENDING, ENQUEUED, RETRY):
        return None
    if _pause_of(row, pauses) is not None:
        return PAUSED_BY_OPERATOR
    code = events.reason_code(row.get("last_error"))
    if row["status"] != RETRY:
        return IN_QUEUE
    if code == "rate_limited":
        return PROVIDER_ASKED
    if code == "rate_limit_wait":
        return RATE_SLOT
    if code == "sending_paused":
        return IN_QUEUE  # it met a pause that has ended: the resume made it due
    return NEXT_ATTEMPT


def _pause_of(row: dict, pauses):
    return next((held for held in pauses if held.scope in (ALL_SENDING, row["family"])), None)


def waiting_short(row: dict, pauses) -> str:
    code = waiting_code(row, pauses)
    return _(WAITING_SHORT[code]) if code else ""


def waiting(row: dict, pauses, *, rate_limit: int) -> str:
    """What a waiting email waits for, in a sentence for its page; "" for a settled one."""
    code = waiting_code(row, pauses)
    if code is None:
        return ""
    if code == PAUSED_BY_OPERATOR:
        held = _pause_of(row, pauses)
        return _(
            PAUSED_LONG,
            who=pause_actor(held),
            what=pause_scope(held.scope),
            time=history_time(held.at),
            reason=held.reason,
        )
    at = history_time(row.get("next_attempt_at"), fallback=_("any moment"))
    sentence = _(WAITING_LONG[code], time=at, limit=rate_limit)
    meant = REASONS.get(events.reason_code(row.get("last_error")) or "")
    if code == NEXT_ATTEMPT and meant:
        sentence += " " + _("The last attempt: %(reason)s.", reason=_(meant))
    return sentence


# Why an email that is not waiting cannot be retried under its key, by its status (or, for a dead
# letter, by what the engine recorded), as the console says it before the actions.
NOT_RETRIED = {
    "may_have_gone": N_(
        "It cannot be retried: the provider may already have sent it. The portal recorded: %(reason)s. Ask the "
        "provider, then confirm it as sent, or send it again as a new email."
    ),
    "sent_again": N_("It cannot be retried: it was already sent again as a new email (see its history)."),
    "accepted": N_("Nothing to retry: the provider accepted it (message ID %(id)s)."),
    "failed_at_provider": N_(
        "It cannot be retried under its key: the provider took it (message ID %(id)s) and reported that it could "
        "not send it."
    ),
    BOUNCED: N_("It cannot be retried: the provider sent it, and the recipient's server refused it."),
    COMPLAINED: N_("It cannot be retried: the provider sent it, and the recipient marked it as spam."),
    SUPPRESSED: N_(
        "It cannot be retried: the address is on the suppression list. Remove it there first if the person "
        "asks for email again."
    ),
    CANCELLED: N_("It cannot be retried: it was cancelled, and nothing was sent."),
}
MAY_HAVE_GONE_REASON = N_("an earlier attempt may have reached the provider")


def not_retried(row: dict, actions: list[str]) -> str:
    """Why this email offers no retry, in a sentence; "" when it does, or while it waits."""
    status = row["status"]
    if "retry" in actions or status in (PENDING, ENQUEUED, RETRY, PROCESSING):
        return ""
    code = events.reason_code(row.get("last_error"))
    if status == DEAD_LETTER and code == "sent_again":
        return _(NOT_RETRIED["sent_again"])
    if row.get("provider_message_id") and status in (SENT, DELIVERED):
        return _(NOT_RETRIED["accepted"], id=row["provider_message_id"])
    if status in (BOUNCED, COMPLAINED, SUPPRESSED, CANCELLED):
        return _(NOT_RETRIED[status])
    if status in (SENT, DELIVERED):
        return _("Nothing to retry: it is recorded as sent.")
    if status == FAILED and row.get("provider_message_id"):
        return _(NOT_RETRIED["failed_at_provider"], id=row["provider_message_id"])
    # A failed email or a dead letter that may have gone out: the engine's reason says why.
    meant = REASONS.get(code or "") or MAY_HAVE_GONE_REASON
    return _(NOT_RETRIED["may_have_gone"], reason=_(meant))


def reason_meant(last_error: str | None) -> str:
    """What the engine's last reason meant, in words; "" for a code with none."""
    meant = REASONS.get(events.reason_code(last_error) or "")
    return _(meant) if meant else ""


# --- the retention glance, a batch request's answer --------------------------------------------------


def kept(items) -> list:
    """The retention glance's rows, their words in the page's language: `rule` is a message whose
    placeholder `days` the row carries (portal/outbox/operate/retention.py)."""
    return [replace(item, what=_(item.what), rule=_(item.rule, days=item.days or 0)) for item in items]


def batch_answer(request) -> str:
    """A batch request's answer (operate.listing.BatchRequest), as the request table shows it: a
    list the provider took, with its number of message IDs (one per member of the request); any
    other answer is the provider's status and reason code, shown as stored."""
    if request.answer == REQUEST_ACCEPTED:
        return _("accepted: %(count)d message IDs", count=request.size)
    return request.answer or ""


# --- a pause of sending ----------------------------------------------------------------------------


def pause_scope(scope: str) -> str:
    """What a pause holds, in the reader's words: all sending, or one family's emails."""
    if scope == ALL_SENDING:
        return _("all sending")
    return _("%(family)s emails", family=scope.replace("_", " "))


def pause_actor(pause) -> str:
    """Who paused: the admin's address, or the command line."""
    if pause.actor:
        return pause.actor
    return _("the command line") if pause.actor_user_id is None else _("an admin")


# --- the comparison of the suppression lists ---------------------------------------------------------

# Where a difference's entry is, and why the other list has it not (suppression_comparison.CAUSES).
CAUSE_WORDS = {
    comparing.REMOVED_IN_PORTAL: N_("Only at Resend: removed from the portal’s list"),
    comparing.NEVER_IN_PORTAL: N_("Only at Resend: never on the portal’s list"),
    comparing.REMOVED_AT_PROVIDER: N_("Only in the portal: removed at Resend"),
    comparing.NEVER_AT_PROVIDER: N_("Only in the portal: never at Resend"),
}
assert set(CAUSE_WORDS) == set(comparing.CAUSES)
# An offer's button, and what the page says once it is done (with the address, or "an erased person").
OFFER_WORDS = {
    comparing.REMOVE_AT_PROVIDER: N_("Remove at Resend"),
    comparing.ADD_TO_PORTAL: N_("Add to the portal"),
    comparing.REMOVE_FROM_PORTAL: N_("Remove from the portal"),
    comparing.ADD_AT_PROVIDER: N_("Add at Resend"),
}
OFFER_DONE = {
    comparing.REMOVE_AT_PROVIDER: N_("%(who)s was removed from Resend’s suppression list."),
    comparing.ADD_TO_PORTAL: N_("%(who)s was added to the portal’s suppression list."),
    comparing.REMOVE_FROM_PORTAL: N_("%(who)s was removed from the portal’s suppression list."),
    comparing.ADD_AT_PROVIDER: N_("%(who)s was added to Resend’s suppression list."),
}
assert set(OFFER_WORDS) == set(OFFER_DONE) == set(comparing.ALL_OFFERS)
# Why a pass stopped early, or an offer changed nothing.
COMPARISON_CODES = {
    comparing.SENDING_FIRST: N_("sending needed every request Resend allows, and goes first"),
    comparing.PROVIDER_BUSY: N_("Resend was busy and answered “too many requests”"),
    comparing.PROVIDER_UNREACHABLE: N_("Resend could not be reached"),
    comparing.UNREADABLE_ANSWER: N_("Resend’s answer could not be read"),
    comparing.TOO_LONG: N_("Resend’s list is longer than one pass reads"),
    comparing.LIMIT_UNREADABLE: N_("the shared rate limit could not be read, so Resend was not asked"),
    comparing.UNKNOWN_DIFFERENCE: N_(
        "There is no such difference: it may have been acted on already. Nothing was changed."
    ),
    comparing.NOT_OFFERED: N_("That is not offered for this difference. Nothing was changed."),
}
assert set(comparing.STOPS) <= set(COMPARISON_CODES)
AN_ERASED_PERSON = N_("an erased person")
AN_ERASED_PERSON_FIRST = N_("An erased person")  # at the start of a sentence


def cause_word(cause: str) -> str:
    return _(CAUSE_WORDS[cause]) if cause in CAUSE_WORDS else cause


def offer_word(offer: str) -> str:
    return _(OFFER_WORDS[offer]) if offer in OFFER_WORDS else offer


def who(email: str | None) -> str:
    """A difference's entry as the page names it: its address, or an erased person, never their hash."""
    return email if email else _(AN_ERASED_PERSON)


def offer_done(offer: str, email: str | None) -> str:
    return _(OFFER_DONE[offer], who=email or _(AN_ERASED_PERSON_FIRST))


def comparison_code(code: str | None) -> str:
    """A stop's or a refusal's code in words; a provider error's code (provider_error_500) as stored."""
    if not code:
        return ""
    if code in COMPARISON_CODES:
        return _(COMPARISON_CODES[code])
    return _("Resend answered with an error (%(code)s)", code=code.removeprefix("provider_error_"))


def offer_refused(code: str) -> str:
    """Why an offer changed nothing, as the page says it."""
    if code in (comparing.UNKNOWN_DIFFERENCE, comparing.NOT_OFFERED):
        return _(COMPARISON_CODES[code])
    return _("Nothing was changed: %(why)s. Try again later.", why=comparison_code(code))
