"""The statement book of email_batches and email_batch_requests: every statement that changes a
batch or its request log, here and nowhere else (a test holds it). send/batch.py says which facts
they keep; the members' own statements are in rows.py, with every statement of email_outbox.

The request log: every request recorded at its seal, then answered, or taken back. Its functions
run inside the caller's write (the seal's, or a settle's), so the log and the batch never
disagree. `params` carries the batch's ID, its claim's number and `now`.
"""

from __future__ import annotations

import sqlalchemy as sa

from portal.core.driver import Statement
from portal.outbox.ground.rows import GROUP_MEMBERS, UNSTAMP_FIRST_ATTEMPT
from portal.outbox.ground.statuses import PROCESSING, UNSETTLED, WAITING, sql_list

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
LOG_ANSWER = Statement(
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
WITHDRAW_LOGGED = Statement(
    """
    DELETE FROM email_batch_requests WHERE batch_id = :batch AND answer IS NULL
      AND number = (SELECT request_count FROM email_batches WHERE id = :batch AND attempt_count = :attempt)
    """
)
WITHDRAW = Statement(
    """
    UPDATE email_batches
    SET request_count = request_count - 1,
        sealed_at = CASE WHEN NOT EXISTS (SELECT 1 FROM email_outbox WHERE batch_id = :batch AND outcome_unknown = 1)
                         THEN NULL ELSE sealed_at END,
        updated_at = :now
    WHERE id = :batch AND attempt_count = :attempt AND request_count > 0
    """
)


def answer_steps(params: dict, answer: str | None) -> list:
    """close_request's steps for a request that was made: what the provider said to it."""
    return [] if answer is None else [(LOG_ANSWER, {**params, "request_answer": answer})]


def close_request(conn: sa.Connection, params: dict, answer: str | None, *, withdraw: bool = False) -> None:
    """What became of this claim's latest request: `withdraw`, it was never made (no slot came, or a
    member left during the wait; a batch left with no request is open again, its first attempts
    unstamped); `answer`, what the provider said to the request before it."""
    if withdraw and WITHDRAW_LOGGED(conn, params).rowcount == 1 and WITHDRAW(conn, params).rowcount == 1:
        UNSTAMP_FIRST_ATTEMPT(conn, params)
    if answer is not None:
        LOG_ANSWER(conn, {**params, "request_answer": answer})


# A claim and a seal each go to a libSQL server as one request (Database.write_steps): no answer
# comes back between their statements, so what the claim's answer used to decide is in each
# statement's own WHERE: the claim's token (this claim took the batch, and it is not sealed), or
# changes(), the number of rows the statement just before it changed.
CLAIM_BATCH = Statement(
    """
    UPDATE email_batches
    SET attempt_count = attempt_count + 1, claim_expires_at = :claim_expires_at, claim_token = :token,
        updated_at = :now
    WHERE id = :batch AND settled_at IS NULL AND (claim_expires_at IS NULL OR claim_expires_at <= :now)
    """
)

# No member due (not yet, or every one settled): the batch is free again (or done).
UNCLAIM_IF_NONE_DUE = Statement(
    "UPDATE email_batches SET claim_expires_at = NULL WHERE id = :batch AND claim_token = :token AND changes() = 0"
)

RECOMPOSE_SQL = """
    UPDATE email_batches
    SET composition = composition + 1,
        provider_key = substr(provider_key, 1, length(provider_key) - length(CAST(composition AS TEXT)))
                       || CAST(composition + 1 AS TEXT),
        updated_at = :now
    WHERE id = :batch AND sealed_at IS NULL
"""

RECOMPOSE = Statement(RECOMPOSE_SQL)
RECOMPOSE_IF_RENUMBERED = Statement(RECOMPOSE_SQL + " AND changes() > 0")

SETTLE_BATCH_IF_DONE = Statement(
    f"""
    UPDATE email_batches SET settled_at = :now, claim_expires_at = NULL, updated_at = :now
    WHERE id = :batch AND settled_at IS NULL AND NOT EXISTS (
        SELECT 1 FROM email_outbox WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)}
          AND provider_message_id IS NULL)
    """
)

# In the claim's write, after it stored the payloads: only this claim's (its token), only a list
# that is whole (every member left has its stored payload) and has attempts left; else the
# delivery seals as usual, after its checks.
SEAL_WHOLE_CLAIMED = Statement(
    f"""
    UPDATE email_batches
    SET sealed_at = :now, request_count = request_count + 1, updated_at = :now
    WHERE id = :batch AND claim_token = :token AND sealed_at IS NULL AND settled_at IS NULL
      AND EXISTS (SELECT 1 FROM email_outbox WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)}
                  AND provider_message_id IS NULL)
      AND NOT EXISTS (SELECT 1 FROM email_outbox m WHERE m.batch_id = :batch AND m.status IN {sql_list(UNSETTLED)}
                      AND m.provider_message_id IS NULL
                      AND (m.status != '{PROCESSING}' OR m.attempt_count > :max_attempts
                           OR NOT EXISTS (SELECT 1 FROM email_frozen_payloads f WHERE f.outbox_id = m.id)))
    """
)

SEAL = Statement(
    f"""
    UPDATE email_batches
    SET sealed_at = COALESCE(sealed_at, :now), request_count = request_count + 1, updated_at = :now
    WHERE id = :batch AND attempt_count = :attempt AND settled_at IS NULL
      AND claim_expires_at IS NOT NULL AND claim_expires_at > :now
      AND EXISTS (SELECT 1 FROM email_outbox WHERE batch_id = :batch AND status IN {sql_list(UNSETTLED)}
                  AND provider_message_id IS NULL)
    """
)

# A request the provider refused with a 429 was not taken (its key was not used): while no request
# of the list may have been taken (no member's outcome is unknown), the list is open again, as a
# single email is after a 429, and a member may still leave (under a new key) before the next seal.
UNSEAL_IF_NOTHING_TAKEN = Statement(
    """
    UPDATE email_batches SET sealed_at = NULL, updated_at = :now
    WHERE id = :batch AND attempt_count = :attempt AND sealed_at IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM email_outbox WHERE batch_id = :batch AND outcome_unknown = 1)
    """
)

RECORD_ANSWER = Statement("UPDATE email_batches SET last_answer = :answer, updated_at = :now WHERE id = :batch")

RELEASE_BATCH = Statement(
    """
    UPDATE email_batches SET claim_expires_at = NULL, last_answer = :reason, updated_at = :now
    WHERE id = :batch AND attempt_count = :attempt
    """
)

SETTLE_DISSOLVED = Statement(
    "UPDATE email_batches SET settled_at = :now, claim_expires_at = NULL, last_answer = :reason, "
    "updated_at = :now WHERE id = :batch AND attempt_count = :attempt"
)

INSERT_BATCHES = Statement(
    f"""
    INSERT INTO email_batches (id, family, provider_key, composition, created_at, updated_at)
    SELECT g.value ->> '$.batch', g.value ->> '$.family',
        (g.value ->> '$.environment') || ':' || (SELECT install_id FROM portal_install WHERE id = 1)
            || ':' || (g.value ->> '$.batch') || ':1',
        1, :now, :now
    FROM json_each(:groups) AS g
    WHERE (SELECT COUNT(*) FROM {GROUP_MEMBERS}) >= 2
      AND NOT EXISTS (
        SELECT 1 FROM {GROUP_MEMBERS}
        WHERE o.batch_id IS NOT NULL OR o.first_attempt_at IS NOT NULL
           OR o.provider_message_id IS NOT NULL OR o.status NOT IN {sql_list(WAITING)})
    """
)
