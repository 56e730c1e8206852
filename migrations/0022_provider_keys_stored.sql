-- The idempotency key a row is sent under is stored with the row, and every attempt reads it: a
-- release that changes how keys are made can no longer retry a row under a key the provider has
-- never seen (an old worker's lost answer, retried by a new worker, was a second email).
ALTER TABLE email_outbox ADD COLUMN provider_key TEXT;

-- The rows already written keep the key the previous release computes for them (migration 0020's
-- rule): the domain's key before row_keys_since, the row's ID from then on.
UPDATE email_outbox SET provider_key = environment || ':' || (SELECT install_id FROM portal_install WHERE id = 1)
    || ':' || CASE WHEN (SELECT row_keys_since FROM portal_install WHERE id = 1) IS NULL
                     OR created_at < (SELECT row_keys_since FROM portal_install WHERE id = 1)
                   THEN idempotency_key ELSE id END;

-- A row written during the deploy by a release that does not know the column (it runs until the new
-- one replaces it) gets the key that release computes, in its own insert's transaction.
CREATE TRIGGER email_outbox_provider_key_on_insert AFTER INSERT ON email_outbox
WHEN new.provider_key IS NULL
BEGIN
    UPDATE email_outbox SET provider_key = new.environment || ':'
        || (SELECT install_id FROM portal_install WHERE id = 1) || ':' || new.id
    WHERE id = new.id; END;
