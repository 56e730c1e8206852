-- Every request a batch made, for the console: when, under which key, with how many emails, and
-- what the provider answered (no answer recorded: the worker that made it died before it could).
CREATE TABLE email_batch_requests (
    batch_id TEXT NOT NULL REFERENCES email_batches (id),
    number INTEGER NOT NULL,              -- 1 for the first request under the batch's key
    provider_key TEXT NOT NULL,
    size INTEGER NOT NULL,
    requested_at TEXT NOT NULL,
    answer TEXT,                          -- classified: status and reason, never an address
    answered_at TEXT,
    PRIMARY KEY (batch_id, number)
);
