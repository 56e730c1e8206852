-- What many rows of one write share (a campaign's subject and Markdown body) is stored once, not in
-- every recipient's row: 10,000 copies of a 100 KB body were a gigabyte until the retention purge.
-- A row's template input is its own part patched onto the shared one (json_patch, intents.py).
CREATE TABLE email_shared_inputs (
    id TEXT PRIMARY KEY,              -- shr_<the first 32 hex digits of the SHA-256 of its JSON>
    data TEXT NOT NULL,
    created_at TEXT NOT NULL
);

ALTER TABLE email_outbox ADD COLUMN shared_input_id TEXT REFERENCES email_shared_inputs (id);

CREATE INDEX email_outbox_shared_input ON email_outbox (shared_input_id) WHERE shared_input_id IS NOT NULL;
