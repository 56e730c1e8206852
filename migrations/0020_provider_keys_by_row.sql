-- From now on the provider's idempotency key ends in the row's random ID instead of the domain's
-- key (outbox/claims.py). A row created before this migration keeps the key it may already have
-- been sent under: a retry under a new key could be a second email. Fixed-width, as created_at.
ALTER TABLE portal_install ADD COLUMN row_keys_since TEXT;
UPDATE portal_install SET row_keys_since = replace(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'Z', '000Z');
