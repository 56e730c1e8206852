"""The console's writes: an operator's action on one email, or on every email a filter matches, and
an offer of the suppression lists' comparison.

Each is one engine call (portal/outbox/operate/actions.py): one transaction for the state and its audit
events, publication after the commit.
"""

from __future__ import annotations

from portal.core import clock
from portal.outbox.operate import operator
from portal.outbox.operate.operator import ActionRefused, ActionResult


def act_on_email(
    ctx, *, outbox_id: str, action: str, reason: str, actor_user_id: int, message_id=None, duplicate_confirmed=False
) -> ActionResult:
    return operator.apply_action(
        ctx,
        action=action,
        outbox_ids=[outbox_id],
        reason=reason,
        actor_user_id=actor_user_id,
        message_id=message_id,
        duplicate_confirmed=duplicate_confirmed,
        now=clock.utcnow(),
    )


def pause_sending(ctx, *, family: str | None, reason: str, actor_user_id: int) -> operator.PauseResult:
    """Pause all sending (`family` None) or one family; returns once no request of it can leave."""
    return operator.pause_sending(ctx, family=family, reason=reason, actor_user_id=actor_user_id, now=clock.utcnow())


def resume_sending(ctx, *, family: str | None, reason: str, actor_user_id: int) -> operator.PauseResult:
    """End that pause and publish the emails it held, transactional before campaigns."""
    return operator.resume_sending(ctx, family=family, reason=reason, actor_user_id=actor_user_id, now=clock.utcnow())


def eligible_count(ctx, filters: operator.OutboxFilter, action: str) -> int:
    """How many emails the filters match that this action may change (at most the bulk limit)."""
    return operator.count_eligible(ctx.db, filters, action)


def act_on_list(
    ctx,
    *,
    filters: operator.OutboxFilter,
    action: str,
    reason: str,
    actor_user_id: int,
    expected_count: int,
    duplicate_confirmed=False,
) -> ActionResult:
    """The action on the emails the filters match, if they are still the number the operator confirmed."""
    with ctx.db.read() as conn:
        ids = operator.eligible_ids(conn, filters, action)
    if len(ids) != expected_count:
        raise ListChanged(len(ids))
    return operator.apply_action(
        ctx,
        action=action,
        outbox_ids=ids,
        reason=reason,
        actor_user_id=actor_user_id,
        duplicate_confirmed=duplicate_confirmed,
        now=clock.utcnow(),
    )


def act_on_difference(ctx, *, difference_id: int, offer: str, actor_user_id: int) -> operator.OfferDone:
    """One offer of the suppression lists' comparison, acted on: one list changed, audited, once."""
    return operator.act_on_difference(
        ctx, difference_id=difference_id, offer=offer, actor_user_id=actor_user_id, now=clock.utcnow()
    )


class ListChanged(ActionRefused):
    """The list no longer matches the count the operator confirmed; nothing was changed."""

    def __init__(self, count: int):
        self.count = count
        super().__init__(f"The list changed since you confirmed it: {count} emails match now. Check and confirm again.")
