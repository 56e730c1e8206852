-- What the provider told us after it accepted an email, and who changed the suppression list.

-- One row per provider event, keyed by the Svix message ID (the `svix-id` header), so a replayed
-- receipt is stored once. A receipt is applied in the same transaction that stores it, and every
-- statement after the insert acts only while processed_at IS NULL.
CREATE TABLE email_receipts (
    id INTEGER PRIMARY KEY,
    provider_event_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    provider_message_id TEXT,                     -- data.email_id
    outbox_id TEXT,                               -- the row it was matched to, if any
    event_created_at TEXT,                        -- the event's created_at, fixed-width UTC ISO
    environment TEXT,                             -- data.tags.environment as received
    payload TEXT,                                 -- the JSON body; NULL when the receipt is not ours to keep
    outcome TEXT,                                 -- see OUTCOMES in portal/webhooks/service.py
    received_at TEXT NOT NULL,
    processed_at TEXT
);

CREATE INDEX email_receipts_outcome ON email_receipts (outcome);
CREATE INDEX email_receipts_message ON email_receipts (provider_message_id);

-- Every addition to and removal from email_suppressions, by an admin or by the webhook.
CREATE TABLE email_suppression_events (
    id INTEGER PRIMARY KEY,
    email TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('add', 'remove')),
    reason TEXT NOT NULL,
    actor_user_id INTEGER REFERENCES users (id),
    source TEXT NOT NULL CHECK (source IN ('admin', 'webhook')),
    created_at TEXT NOT NULL,
    CHECK ((source = 'admin') = (actor_user_id IS NOT NULL))
);

CREATE INDEX email_suppression_events_email ON email_suppression_events (email, created_at);
