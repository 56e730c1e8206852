-- Password reset links, colleagues who left, and invitations taken back.

-- One row per reset link sent. Like invitations, the token is never stored: only a random nonce
-- (the email's template input) and the SHA-256 of the token, an HMAC of the nonce under SECRET_KEY.
-- A link is used once (used_at), expires after an hour, and a newer link or a changed password
-- closes every older one. AUTOINCREMENT: the ID goes into the email's idempotency key.
CREATE TABLE password_resets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id INTEGER NOT NULL REFERENCES users (id),
    token_nonce TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,                     -- fixed-width UTC
    expires_at TEXT NOT NULL,
    used_at TEXT                                  -- used, or closed by a newer link or password
);

CREATE INDEX password_resets_user ON password_resets (user_id, created_at);

-- A colleague who left: they can no longer sign in, their membership ended when they were
-- deactivated, and the hours they attended until then stay with the company (company_memberships).
ALTER TABLE users ADD COLUMN deactivated_at TEXT;

-- A manager took an invitation back before it was accepted: its link no longer opens.
ALTER TABLE invitations ADD COLUMN revoked_at TEXT;
