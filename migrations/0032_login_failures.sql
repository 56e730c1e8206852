-- Failed sign-ins per address, counted in the database so that sign-in keeps working, and
-- guessing stays slowed, while Redis is away (portal/auth/throttle.py). The address is kept only
-- as a hash; a row is one window of failures, and a row whose window ended means nothing.
CREATE TABLE login_failures (
    address_hash TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    window_started_at TEXT NOT NULL
);

CREATE INDEX login_failures_window ON login_failures (window_started_at);
