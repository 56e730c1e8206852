-- A receipt is the webhook's, or what the portal learned by asking the provider about an accepted
-- email whose receipt never came (portal/outbox/receipt_lookup.py): a lookup.
ALTER TABLE email_receipts ADD COLUMN source TEXT NOT NULL DEFAULT 'webhook' CHECK (source IN ('webhook', 'lookup'));

-- Each accepted email the provider was asked about: when last, how often, and what it said (its
-- last event, or why there was no answer). No personal data.
CREATE TABLE email_lookups (
    outbox_id TEXT PRIMARY KEY REFERENCES email_outbox (id) ON DELETE CASCADE,
    asked_at TEXT NOT NULL,
    asks INTEGER NOT NULL,
    answer TEXT NOT NULL
);
