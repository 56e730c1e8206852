-- Batch delivery (portal/outbox/batches.py): up to OUTBOX_BATCH_SIZE rows of one family sent in one
-- provider request (POST /emails/batch) under one idempotency key. The batch's composition (its rows
-- and their positions) and its key are written before its first request; `sealed_at` records that a
-- request is about to be made, and from then on neither ever changes, so every retry sends the same
-- list under the same key. Before the seal a row that may no longer be sent leaves the batch, and the
-- key's last part (`composition`) counts up with each such change.
CREATE TABLE email_batches (
    id TEXT PRIMARY KEY,                  -- bat_<32 hex digits>
    family TEXT NOT NULL,
    provider_key TEXT NOT NULL,           -- the idempotency key the provider sees for this composition
    composition INTEGER NOT NULL DEFAULT 1,
    attempt_count INTEGER NOT NULL DEFAULT 0, -- claims taken; every settle carries the claim's number
    claim_expires_at TEXT,
    sealed_at TEXT,                       -- set just before the first request; never cleared
    request_count INTEGER NOT NULL DEFAULT 0, -- requests made under provider_key
    last_answer TEXT,                     -- the last request's answer, classified (no addresses)
    settled_at TEXT,                      -- every row of the batch has settled
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX email_batches_open ON email_batches (created_at) WHERE settled_at IS NULL;

ALTER TABLE email_outbox ADD COLUMN batch_id TEXT REFERENCES email_batches (id);
ALTER TABLE email_outbox ADD COLUMN batch_position INTEGER;  -- 0-based place in the request's list

CREATE INDEX email_outbox_batch ON email_outbox (batch_id, batch_position) WHERE batch_id IS NOT NULL;
