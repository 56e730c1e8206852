-- A row in flight when it was cancelled (its recipient deactivated, its campaign cancelled, an
-- unsubscribe): the claim holder may be waiting for a rate slot, and no request has reached the
-- provider yet. The cancel cannot settle a row another delivery holds, so it asks that delivery to
-- stop: the delivery checks before its provider call, and a later claim settles the row.
ALTER TABLE email_outbox ADD COLUMN cancel_requested_at TEXT;
ALTER TABLE email_outbox ADD COLUMN cancel_reason TEXT;
