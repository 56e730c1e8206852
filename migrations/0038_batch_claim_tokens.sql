-- Each claim of a batch writes a token of its own: the statements after the claim, sent with it
-- in one request to a libSQL server (portal/outbox/batches.py), run only for the claim that wrote
-- it, where the claim's answer used to decide in between.
ALTER TABLE email_batches ADD COLUMN claim_token TEXT;
