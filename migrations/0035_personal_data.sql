-- A person's right to see and erase what the portal holds (portal/privacy/).

-- Who downloaded or erased a person's data, and when: never the data, nor the address (a download
-- names the account it was for while one exists; an erasure names only the pseudonym it left).
CREATE TABLE privacy_events (
    id INTEGER PRIMARY KEY,
    action TEXT NOT NULL CHECK (action IN ('download', 'erase')),
    subject_user_id INTEGER REFERENCES users (id),
    pseudonym TEXT,
    actor_user_id INTEGER REFERENCES users (id),
    created_at TEXT NOT NULL
);

-- The receipts of one person's emails are found by row, for a download and an erasure.
CREATE INDEX email_receipts_by_row ON email_receipts (outbox_id);
