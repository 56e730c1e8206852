-- The language of the page a "forgot password" request was made on: the reset email is written in
-- it when the worker's pass answers the request (portal/account/operations.py). NULL: a request from
-- before languages, answered in English.
ALTER TABLE password_reset_requests ADD COLUMN language TEXT CHECK (language IS NULL OR language IN ('en', 'nb'));
