-- Signing out ends every session of the account, server-side (issue 14, finding 4).
-- A session carries the generation it was signed in under; the session loader refuses a session
-- whose generation is no longer the account's. Sign-out (and, later, a password change or reset)
-- adds one, so a copied or replayed session cookie stops working at once.
ALTER TABLE users ADD COLUMN session_generation INTEGER NOT NULL DEFAULT 0;
