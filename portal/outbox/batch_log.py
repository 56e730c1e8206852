"""A batch's request log: every request recorded at its seal, then answered, or taken back.

Each function runs inside the caller's write (the seal's, or a settle's), so the log and the batch
never disagree. `params` carries the batch's ID, its claim's number and `now`.
"""

from __future__ import annotations

import sqlalchemy as sa

from portal.core.driver import Statement
from portal.outbox.statuses import UNSETTLED, sql_list

# The seal's request, about to be made (its answer comes later): right after the seal, and only if it
# sealed (changes() is the seal's).
LOG_REQUEST_IF_SEALED = Statement(
    f"""
    INSERT INTO email_batch_requests (batch_id, number, provider_key, size, requested_at)
    SELECT id, request_count, provider_key,
           (SELECT COUNT(*) FROM email_outbox WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)}
              AND provider_message_id IS NULL), :now
    FROM email_batches WHERE id = :batch AND changes() = 1
    """
)


# The answer to this claim's latest request (never to an earlier one a dead worker left unanswered).
_LOG_ANSWER = Statement(
    """
    UPDATE email_batch_requests SET answer = :request_answer, answered_at = :now
    WHERE batch_id = :batch AND answer IS NULL
      AND number = (SELECT request_count FROM email_batches WHERE id = :batch AND attempt_count = :attempt)
    """
)


# A request sealed but never made (no slot came, or a member was asked to stop during the wait) is
# taken back: the batch counts it no more, and a batch none of whose requests may have been taken
# (none was made, or the provider refused each with a 429; no member's outcome is unknown) is open
# again, its members' first attempts unstamped, since nothing of it has reached the provider.
_WITHDRAW_LOGGED = Statement(
    """
    DELETE FROM email_batch_requests WHERE batch_id = :batch AND answer IS NULL
      AND number = (SELECT request_count FROM email_batches WHERE id = :batch AND attempt_count = :attempt)
    """
)
_WITHDRAW = Statement(
    """
    UPDATE email_batches
    SET request_count = request_count - 1,
        sealed_at = CASE WHEN NOT EXISTS (SELECT 1 FROM email_outbox WHERE batch_id = :batch AND outcome_unknown = 1)
                         THEN NULL ELSE sealed_at END,
        updated_at = :now
    WHERE id = :batch AND attempt_count = :attempt AND request_count > 0
    """
)
_UNSTAMP_FIRST_ATTEMPT = Statement(
    f"""
    UPDATE email_outbox SET first_attempt_at = NULL, updated_at = :now
    WHERE batch_id = :batch AND provider_message_id IS NULL AND outcome_unknown = 0
      AND NOT EXISTS (SELECT 1 FROM email_batches b WHERE b.id = :batch AND b.sealed_at IS NOT NULL)
      AND status IN {sql_list(UNSETTLED)}
    """
)


def answer_steps(params: dict, answer: str | None) -> list:
    """close_request's steps for a request that was made: what the provider said to it."""
    return [] if answer is None else [(_LOG_ANSWER, {**params, "request_answer": answer})]


def close_request(conn: sa.Connection, params: dict, answer: str | None, *, withdraw: bool = False) -> None:
    """What became of this claim's latest request: `withdraw`, it was never made (no slot came, or a
    member left during the wait; a batch left with no request is open again, its first attempts
    unstamped); `answer`, what the provider said to the request before it."""
    if withdraw and _WITHDRAW_LOGGED(conn, params).rowcount == 1 and _WITHDRAW(conn, params).rowcount == 1:
        _UNSTAMP_FIRST_ATTEMPT(conn, params)
    if answer is not None:
        _LOG_ANSWER(conn, {**params, "request_answer": answer})
