-- The relay's one indexed column, and the install ID that namespaces idempotency keys.

-- relay_since: the time from which a waiting or in-flight row's stale period counts. The relay
-- republishes a row once OUTBOX_REPUBLISH_AFTER_SECONDS have passed since it, and then moves it to
-- the republication time, so a lost message is republished once per stale period. NULL once the
-- row settles, so the index holds only rows the relay may ever need, however large the table grows.
--   pending     '0000-…' (always due)        enqueued    its publication time
--   retry       next_attempt_at              processing  claim_expires_at − the stale period
ALTER TABLE email_outbox ADD COLUMN relay_since TEXT;

UPDATE email_outbox SET relay_since = CASE status
    WHEN 'pending' THEN '0000-01-01T00:00:00.000000Z'
    WHEN 'enqueued' THEN COALESCE(enqueued_at, updated_at)
    WHEN 'retry' THEN COALESCE(next_attempt_at, updated_at)
    WHEN 'processing' THEN COALESCE(claim_expires_at, updated_at)
    ELSE NULL END;

CREATE INDEX email_outbox_relay ON email_outbox (relay_since) WHERE relay_since IS NOT NULL;

-- One row, created once per database: a reset or new database gets a new ID, so its idempotency
-- keys never meet those another database sent on the same provider account.
CREATE TABLE portal_install (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    install_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
INSERT INTO portal_install (id, install_id, created_at)
VALUES (1, lower(hex(randomblob(16))), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

-- The daily retention purge finds receipt bodies past their time without reading the table.
CREATE INDEX email_receipts_kept_bodies ON email_receipts (received_at) WHERE payload IS NOT NULL;
