-- SCIM 2.0 provisioning from a company's directory (issue 48, portal/scim/).
--
-- scim_tokens: a company's bearer tokens, stored as SHA-256 hashes (a token is 256 random bits, so a
-- plain hash is enough: nothing to guess). Shown once when made; revoked_at ends one.
CREATE TABLE scim_tokens (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id),
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    created_by INTEGER REFERENCES users (id),
    revoked_at TEXT,
    last_used_at TEXT
);

CREATE INDEX scim_tokens_company ON scim_tokens (company_id);

-- What the directory says of a person: the enterprise extension's department and employee number,
-- its own ID for them (externalId), and when it last changed them. scim_deleted_at: the directory
-- deleted them (they were deactivated as the People page does; SCIM answers 404 for them after).
ALTER TABLE users ADD COLUMN department TEXT;
ALTER TABLE users ADD COLUMN employee_number TEXT;
ALTER TABLE users ADD COLUMN scim_external_id TEXT;
ALTER TABLE users ADD COLUMN scim_updated_at TEXT;
ALTER TABLE users ADD COLUMN scim_deleted_at TEXT;
