-- Campaigns: admin-written emails to an audience, one outbox row per recipient; one-click
-- unsubscribe; and the extra headers a frozen payload carries (List-Unsubscribe).

-- status: draft -> scheduled -> sending -> sent, or cancelled from any of the first three.
-- The recipient list is fixed when sending starts (campaign_recipients); `written` is how many
-- of them have their outbox row, advanced in the same transaction as each batch of rows.
CREATE TABLE campaigns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,        -- in idempotency keys: never reused
    name TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,                           -- Markdown, as the admin wrote it
    audience TEXT NOT NULL,                       -- all_managers | language_volunteers | mentorship_volunteers | company:<id>
    status TEXT NOT NULL DEFAULT 'draft'
        CHECK (status IN ('draft', 'scheduled', 'sending', 'sent', 'cancelled')),
    send_at TEXT,                                 -- fixed-width UTC; set when scheduled
    created_by INTEGER NOT NULL REFERENCES users (id),
    sent_by INTEGER REFERENCES users (id),
    recipients INTEGER,                           -- size of the fixed list, once sending started
    written INTEGER NOT NULL DEFAULT 0,
    left_out_suppressed INTEGER,
    left_out_unsubscribed INTEGER,
    started_at TEXT,
    finished_at TEXT,
    cancelled_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CHECK (recipients IS NULL OR written <= recipients)
);

CREATE INDEX campaigns_due ON campaigns (status, send_at) WHERE status IN ('scheduled', 'sending');

-- The fixed list: position 0..recipients-1, in the order the rows are written.
CREATE TABLE campaign_recipients (
    campaign_id INTEGER NOT NULL REFERENCES campaigns (id),
    position INTEGER NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users (id),
    email TEXT NOT NULL,
    name TEXT NOT NULL,
    outbox_id TEXT,                               -- set with the row, in the same transaction
    PRIMARY KEY (campaign_id, position),
    UNIQUE (campaign_id, user_id)
);

-- People who asked for no more campaigns (transactional email still reaches them).
CREATE TABLE campaign_unsubscribes (
    user_id INTEGER PRIMARY KEY REFERENCES users (id),
    campaign_id INTEGER REFERENCES campaigns (id),   -- the campaign whose link they used
    created_at TEXT NOT NULL
);

-- A frozen payload's extra headers: JSON list of [name, value]; NULL for none.
ALTER TABLE email_frozen_payloads ADD COLUMN headers TEXT;
