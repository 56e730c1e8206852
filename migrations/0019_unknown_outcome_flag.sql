-- Dead letters that say unknown_outcome without the flag: a 409 on a row's first attempt, or the
-- dead-letter queue settling an attempt that was in flight, wrote the status and the reason but
-- not outcome_unknown, so the console offered "Retry" (the same key again) for an email that may
-- have gone out. From now on a settle sets the flag itself (outbox/rows.py); this mends the rest.
UPDATE email_outbox
SET outcome_unknown = 1
WHERE status = 'dead_letter' AND last_error = 'unknown_outcome' AND outcome_unknown = 0
  AND provider_message_id IS NULL;
