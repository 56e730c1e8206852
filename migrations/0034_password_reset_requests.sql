-- "Forgot password" requests, as the web answers them: one row for every address asked about,
-- known or not, so the answer costs the same work either way and its timing tells nobody whether an
-- address has an account. The worker's pass reads each, sends a link if an account exists, and
-- deletes the row (portal/account/operations.py).
CREATE TABLE password_reset_requests (
    id INTEGER PRIMARY KEY,
    address TEXT NOT NULL,
    asked_at TEXT NOT NULL
);
