-- A row a person or a campaign cancel stopped before any attempt: `cancelled`, final.
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt. Dropping the old
-- table would cascade to the frozen payloads, so they are kept aside and put back.

CREATE TABLE frozen_payloads_during_0014 AS SELECT * FROM email_frozen_payloads;

CREATE TABLE email_outbox_0014 (
    id TEXT PRIMARY KEY,
    family TEXT NOT NULL,
    recipient TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    provider_message_id TEXT,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN (
        'pending', 'enqueued', 'processing', 'retry', 'sent', 'delivered', 'bounced',
        'complained', 'failed', 'suppressed', 'dead_letter', 'cancelled')),
    attempt_count INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    claim_expires_at TEXT,
    next_attempt_at TEXT,
    template TEXT NOT NULL,
    template_version INTEGER NOT NULL,
    layout_version INTEGER NOT NULL,
    template_input TEXT NOT NULL,
    environment TEXT NOT NULL,
    subject_ref TEXT,
    outcome_unknown INTEGER NOT NULL DEFAULT 0,
    first_attempt_at TEXT,
    enqueued_at TEXT,
    sent_at TEXT,
    last_event_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    relay_since TEXT
);

INSERT INTO email_outbox_0014 (id, family, recipient, idempotency_key, provider_message_id, status,
    attempt_count, last_error, claim_expires_at, next_attempt_at, template, template_version,
    layout_version, template_input, environment, subject_ref, outcome_unknown, first_attempt_at,
    enqueued_at, sent_at, last_event_at, created_at, updated_at, relay_since)
SELECT id, family, recipient, idempotency_key, provider_message_id, status,
    attempt_count, last_error, claim_expires_at, next_attempt_at, template, template_version,
    layout_version, template_input, environment, subject_ref, outcome_unknown, first_attempt_at,
    enqueued_at, sent_at, last_event_at, created_at, updated_at, relay_since
FROM email_outbox;

DROP TABLE email_outbox;
ALTER TABLE email_outbox_0014 RENAME TO email_outbox;

CREATE UNIQUE INDEX email_outbox_provider_message_id ON email_outbox (provider_message_id)
    WHERE provider_message_id IS NOT NULL;
CREATE INDEX email_outbox_unsettled ON email_outbox (status, next_attempt_at)
    WHERE status IN ('pending', 'enqueued', 'retry', 'processing');
CREATE INDEX email_outbox_subject ON email_outbox (subject_ref);
CREATE INDEX email_outbox_recipient ON email_outbox (recipient);
CREATE INDEX email_outbox_relay ON email_outbox (relay_since) WHERE relay_since IS NOT NULL;

INSERT INTO email_frozen_payloads SELECT * FROM frozen_payloads_during_0014;
DROP TABLE frozen_payloads_during_0014;
