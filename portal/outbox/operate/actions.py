"""What a person may do to outbox rows the engine could not settle, each with a reason on record.

Every action is one transaction: a guarded UPDATE decides which of the rows are still eligible
(eligibility and change in one statement, as everywhere in the engine), and an `operator` event
per changed row records who, when, why, and the state before and after. Rows to send are
published only after the commit (`write_then_publish`). An action over a list acts on the
eligible rows among them and leaves the rest untouched.

- retry: a `failed` or `dead_letter` row of which nothing can have gone out (no message ID, no
  attempt of unknown outcome) gets new attempts under the same key, so inside the provider's
  window the provider itself still refuses a duplicate.
- confirm_sent: a dead letter whose outcome is unknown, after the operator checked the provider
  ("ask the provider" on its page): it settles as sent, with the provider's message ID if known.
- send_again: the same dead letter, sent as a new email under a new key, after the operator
  confirmed that the person may receive it twice. The old row stays a dead letter marked
  `sent_again`, so it leaves the list of rows that need a person and cannot be sent a third time.
- cancel: a waiting row of which nothing can have been sent (`rows.cancel_unsent`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import json_array
from portal.core.i18n import N_
from portal.outbox.ground.rows import (
    CANCELLABLE,
    MARK_SENT_AGAIN,
    OPERATOR_CONFIRM_SENT,
    OPERATOR_RETRY,
    RESENDABLE,
    RETRYABLE,
    cancel_unsent,
)
from portal.outbox.ground.statuses import (
    CANCELLED_BY_OPERATOR,
    DEAD_LETTER,
    FAILED,
    OUTCOME_UNKNOWN,
    SENT_AGAIN,
    WAITING,
)
from portal.outbox.operate.listing import OutboxFilter, count_matching, matching_ids
from portal.outbox.write.intents import TEMPLATE_INPUT, EmailIntent
from portal.outbox.write.unit_of_work import write_then_publish

RETRY, CONFIRM_SENT, SEND_AGAIN, CANCEL = "retry", "confirm_sent", "send_again", "cancel"
ACTIONS = (RETRY, CONFIRM_SENT, SEND_AGAIN, CANCEL)
REASON_MAX = 500
# One action over a list changes at most this many rows; the confirmation says so.
BULK_LIMIT = 500

# Which rows each action may change, as a condition on email_outbox.
ELIGIBLE = {RETRY: RETRYABLE, CONFIRM_SENT: OUTCOME_UNKNOWN, SEND_AGAIN: RESENDABLE, CANCEL: CANCELLABLE}
# Why a row is not eligible, in the operator's words.
RULES = {
    RETRY: N_("Only a failed email or a dead letter of which nothing can have been sent can be retried."),
    CONFIRM_SENT: N_("Only an email whose outcome is unknown can be confirmed as sent."),
    SEND_AGAIN: N_("Only an email whose outcome is unknown, and whose content is still kept, can be sent again."),
    CANCEL: N_("Only a waiting email of which nothing can have been sent can be cancelled."),
}


class ActionRefused(ValueError):
    """Nothing was changed; the message says why, without any address or content."""


@dataclass(frozen=True)
class ActionResult:
    action: str
    changed: list[str] = field(default_factory=list)
    new_outbox_ids: list[str] = field(default_factory=list)  # send_again: the new rows, in order
    queued: bool = True  # False: committed, waiting for the relay to publish


_STATES = sa.text(
    f"SELECT id, status, attempt_count, family, recipient, idempotency_key, {TEMPLATE_INPUT} AS template_input, subject_ref "
    "FROM email_outbox WHERE id IN (SELECT value FROM json_each(:ids))"
)
_MESSAGE_ID_TAKEN = sa.text("SELECT 1 FROM email_outbox WHERE provider_message_id = :message_id")
_INSERT_EVENT = sa.text(
    """
    INSERT INTO email_outbox_events (outbox_id, kind, status_before, status_after, attempt, action,
        actor_user_id, reason, related_outbox_id, provider_message_id, created_at)
    SELECT id, 'operator', :before, status, attempt_count, :action, :actor, :reason, :related,
        provider_message_id, :now
    FROM email_outbox WHERE id = :id
    """
)


def apply_action(
    handles,
    *,
    action: str,
    outbox_ids: list[str],
    reason: str,
    actor_user_id: int,
    message_id: str | None = None,
    duplicate_confirmed: bool = False,
    request_id: str | None = None,
    now: datetime,
) -> ActionResult:
    """Apply one action to these rows (those still eligible) at `now`, in one transaction; publish after.

    Raises ActionRefused, with nothing changed, when the input is wrong or no row is eligible.
    `handles` has db, redis, settings and families (a PortalContext).
    """
    reason = (reason or "").strip()
    if action not in ACTIONS:
        raise ActionRefused("Choose one of the actions offered.")
    if not reason:
        raise ActionRefused("Say why: the reason is kept with the action.")
    if len(reason) > REASON_MAX:
        raise ActionRefused(f"Keep the reason under {REASON_MAX} characters.")
    if action == SEND_AGAIN and not duplicate_confirmed:
        raise ActionRefused(N_("Confirm that the person may receive this email twice."))
    message_id = (message_id or "").strip() or None
    if message_id is not None and (action != CONFIRM_SENT or len(outbox_ids) != 1):
        raise ActionRefused(N_("A provider message ID can only be given when confirming one email as sent."))
    ids = list(dict.fromkeys(outbox_ids))[:BULK_LIMIT]
    if not ids:
        raise ActionRefused(N_("No email was chosen."))

    at = clock.iso(now)
    with write_then_publish(handles, now=now, request_id=request_id) as work:
        conn = work.conn
        before = {row.id: row for row in conn.execute(_STATES, {"ids": json_array(ids)})}
        related: dict[str, str] = {}
        if action == RETRY:
            changed = list(conn.execute(OPERATOR_RETRY, {"ids": json_array(ids), "now": at}).scalars())
            work.outbox_ids.extend(changed)  # published after the commit, as new intents are
        elif action == CONFIRM_SENT:
            if message_id is not None and conn.execute(_MESSAGE_ID_TAKEN, {"message_id": message_id}).first():
                raise ActionRefused(N_("Another email already holds that provider message ID."))
            params = {"ids": json_array(ids), "now": at, "message_id": message_id}
            changed = list(conn.execute(OPERATOR_CONFIRM_SENT, params).scalars())
        elif action == SEND_AGAIN:
            changed = list(conn.execute(MARK_SENT_AGAIN, {"ids": json_array(ids), "now": at}).scalars())
            intents = [_again(handles, before[outbox_id]) for outbox_id in changed]
            new_ids = work.add(*intents) if intents else []
            related = dict(zip(changed, new_ids, strict=True))
        else:
            changed = cancel_unsent(conn, ids, CANCELLED_BY_OPERATOR, now=now)
        if not changed:
            raise ActionRefused(RULES[action])
        for outbox_id in changed:
            _record(
                conn, outbox_id, before[outbox_id].status, action, actor_user_id, reason, related.get(outbox_id), at
            )
        for old_id, new_id in related.items():
            # The new row's history starts with where it came from.
            _record(conn, new_id, None, action, actor_user_id, reason, old_id, at)
    return ActionResult(action=action, changed=changed, new_outbox_ids=list(related.values()), queued=work.queued)


def _record(conn, outbox_id, status_before, action, actor_user_id, reason, related, now) -> None:
    conn.execute(
        _INSERT_EVENT,
        {
            "id": outbox_id,
            "before": status_before,
            "action": action,
            "actor": actor_user_id,
            "reason": reason,
            "related": related,
            "now": now,
        },
    )


def _again(handles, row) -> EmailIntent:
    """The same email under a key the provider has never seen, so it is a new email.

    Built from the old row's ID: a row is sent again at most once (it is marked `sent_again`), and
    a replay of the same request builds the same key, so the outbox keeps one row for it.
    """
    return EmailIntent(
        family=handles.families[row.family],
        recipient=row.recipient,
        idempotency_key=f"again:{row.id}",
        data=json.loads(row.template_input),
        subject_ref=row.subject_ref,
    )


def is_unknown_outcome(row: dict) -> bool:
    """A dead letter that may have gone out, as the console shows it (the rule of ELIGIBLE)."""
    return (
        row["status"] == DEAD_LETTER
        and bool(row["outcome_unknown"])
        and row["provider_message_id"] is None
        and row["last_error"] != SENT_AGAIN
    )


def count_eligible(db, filters: OutboxFilter, action: str) -> int:
    """How many emails the filters match that `action` may change (at most BULK_LIMIT)."""
    return count_matching(db, filters, _condition(action), BULK_LIMIT)


def eligible_ids(conn, filters: OutboxFilter, action: str) -> list[str]:
    """The newest BULK_LIMIT emails the filters match that `action` may change, on the caller's transaction."""
    return matching_ids(conn, filters, _condition(action), BULK_LIMIT)


def _condition(action: str) -> str:
    if action not in ELIGIBLE:
        raise ActionRefused("Choose one of the actions offered.")
    return ELIGIBLE[action]


def eligible_actions(row: dict) -> list[str]:
    """The actions this row allows now (the same rules as ELIGIBLE, for the page's buttons)."""
    allowed = []
    nothing_sent = row["provider_message_id"] is None and not row["outcome_unknown"]
    if row["status"] in (FAILED, DEAD_LETTER) and nothing_sent:
        allowed.append(RETRY)
    if is_unknown_outcome(row):
        allowed.append(CONFIRM_SENT)
        if row["recipient"]:
            allowed.append(SEND_AGAIN)
    if row["status"] in WAITING and nothing_sent and not row.get("in_sealed_batch"):
        allowed.append(CANCEL)
    return allowed
