-- An operator's pause of sending (all of it, or one family) and its resume, each with who and why:
-- the audit of the switch. The switch itself lives in Redis, where every worker reads it before
-- every provider request (portal/outbox/ground/pause.py); this table is its history.
-- `scope` is a family name, or '*' for all sending. `action` is 'pause' or 'resume'.
CREATE TABLE email_sending_pauses (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('pause', 'resume')),
    actor_user_id INTEGER REFERENCES users (id),  -- NULL: from the command line
    reason TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX email_sending_pauses_at ON email_sending_pauses (at);
