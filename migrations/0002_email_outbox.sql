-- The transactional outbox: one row per email the portal committed to send.
-- Statuses are listed in portal/outbox/statuses.py, which is the one place that knows them.

CREATE TABLE email_outbox (
    id TEXT PRIMARY KEY,
    family TEXT NOT NULL,
    recipient TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    provider_message_id TEXT,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN (
        'pending', 'enqueued', 'processing', 'retry', 'sent', 'delivered', 'bounced',
        'complained', 'failed', 'suppressed', 'dead_letter')),
    attempt_count INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    claim_expires_at TEXT,
    next_attempt_at TEXT,
    template TEXT NOT NULL,
    template_version INTEGER NOT NULL,
    layout_version INTEGER NOT NULL,
    template_input TEXT NOT NULL,                   -- JSON handed to the family's renderer
    environment TEXT NOT NULL,
    subject_ref TEXT,                               -- the domain row this email is about, e.g. invitation:12
    outcome_unknown INTEGER NOT NULL DEFAULT 0,     -- 1 once an attempt may have reached the provider unanswered
    first_attempt_at TEXT,                          -- first provider request under this key: the window starts here
    enqueued_at TEXT,
    sent_at TEXT,
    last_event_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE UNIQUE INDEX email_outbox_provider_message_id ON email_outbox (provider_message_id)
    WHERE provider_message_id IS NOT NULL;

-- The relay's scan: only rows still waiting or in flight are in this index.
CREATE INDEX email_outbox_unsettled ON email_outbox (status, next_attempt_at)
    WHERE status IN ('pending', 'enqueued', 'retry', 'processing');

CREATE INDEX email_outbox_subject ON email_outbox (subject_ref);
CREATE INDEX email_outbox_recipient ON email_outbox (recipient);

-- The first attempt's message fields, replayed byte for byte by every later attempt.
-- Personal content: deleted as soon as the row settles.
CREATE TABLE email_frozen_payloads (
    outbox_id TEXT PRIMARY KEY REFERENCES email_outbox (id) ON DELETE CASCADE,
    from_address TEXT NOT NULL,
    reply_to TEXT,
    subject TEXT NOT NULL,
    html TEXT NOT NULL,
    text TEXT NOT NULL,
    tags TEXT NOT NULL,                              -- JSON list of {name, value}, before cleaning
    attachment_filename TEXT,
    attachment_content TEXT,                         -- base64
    attachment_content_type TEXT,
    created_at TEXT NOT NULL
);

-- Addresses the portal must not email (bounces, complaints, or an admin's decision).
CREATE TABLE email_suppressions (
    email TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    source TEXT NOT NULL,
    created_at TEXT NOT NULL
);
