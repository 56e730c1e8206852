-- Report emails: who subscribed, which (company, period) runs wrote their emails, and test sends.

-- A manager's choice. `since` is when the current frequency was chosen: the schedule sends the
-- periods that close after it (and catches up on those it missed), never the company's history.
CREATE TABLE report_subscriptions (
    user_id INTEGER PRIMARY KEY REFERENCES users (id),
    company_id INTEGER NOT NULL REFERENCES companies (id),
    frequency TEXT NOT NULL CHECK (frequency IN ('monthly', 'quarterly', 'off')),
    since TEXT NOT NULL,                       -- fixed-width UTC (portal/outbox/clock.py)
    updated_at TEXT NOT NULL
);

CREATE INDEX report_subscriptions_due ON report_subscriptions (frequency, company_id);

-- One row per run of one company's period: written in the same transaction as the run's email
-- intents, so a row exists exactly when its emails do. run_number 1 is the scheduled run (or the
-- first backfill); a forced backfill adds the next number, whose emails carry keys of their own.
CREATE TABLE report_runs (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id),
    period_key TEXT NOT NULL,                  -- 2026-11 (a month) or 2026-Q3 (a quarter)
    run_number INTEGER NOT NULL,
    trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'backfill')),
    requested_by TEXT,                         -- who asked for a backfill (NULL for the schedule)
    recipients INTEGER NOT NULL,
    figures_source TEXT NOT NULL CHECK (figures_source IN ('live', 'snapshot')),
    created_at TEXT NOT NULL,
    UNIQUE (company_id, period_key, run_number)
);

-- A manager's "send me a test": one row per click, keyed by the form's one-time request ID so
-- a double click (the same form posted twice) is one email.
CREATE TABLE report_test_sends (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users (id),
    company_id INTEGER NOT NULL REFERENCES companies (id),
    period_key TEXT NOT NULL,
    request_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (user_id, request_id)
);
