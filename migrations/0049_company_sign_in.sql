-- Sign-in with a company's own OpenID Connect provider (issue 48, portal/sso/).
--
-- company_identity_providers: one provider per company. The client secret is stored sealed
-- (Fernet, under a key derived from SECRET_KEY: portal/core/sealed.py), never in plain text.
-- Settings a manager saved wait for an admin's approval (approved_at NULL) and are not used for
-- sign-in until then; an admin's own save is approved at once. `join_programme` NULL: a person
-- without an account needs an invitation, as before; else they become a volunteer of that programme.
CREATE TABLE company_identity_providers (
    company_id INTEGER PRIMARY KEY REFERENCES companies (id),
    issuer TEXT NOT NULL,
    client_id TEXT NOT NULL,
    client_secret_sealed TEXT NOT NULL,
    join_programme TEXT CHECK (join_programme IS NULL OR join_programme IN ('language', 'mentorship')),
    password_sign_in INTEGER NOT NULL DEFAULT 1 CHECK (password_sign_in IN (0, 1)),
    approved_at TEXT,
    approved_by INTEGER REFERENCES users (id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER REFERENCES users (id)
);

-- The email domains a company's provider vouches for: a domain belongs to one company at most, so
-- an address sends its owner to exactly one provider.
CREATE TABLE company_sign_in_domains (
    domain TEXT PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id)
);

CREATE INDEX company_sign_in_domains_company ON company_sign_in_domains (company_id);

-- An account's identity at a provider: (issuer, subject) names one person for good, whatever
-- their address becomes. Made at the first sign-in through the provider.
CREATE TABLE identity_links (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users (id),
    company_id INTEGER NOT NULL REFERENCES companies (id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
);

CREATE INDEX identity_links_user ON identity_links (user_id);

-- A sign-in sent to a provider and not yet back: its state (stored hashed), nonce and PKCE verifier.
-- The callback uses a row once (used_at), so a replayed state signs no one in.
CREATE TABLE sign_in_requests (
    state_hash TEXT PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id),
    nonce TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    created_at TEXT NOT NULL,
    used_at TEXT
);

-- What a company's managers and TEEI's admins read about its identities: every sign-in through its
-- provider (and every one refused), every change of its sign-in settings, every SCIM change and
-- every token event. `event` is a code (portal/sso/audit.py words it); `reason` a refusal's code.
CREATE TABLE identity_events (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id),
    at TEXT NOT NULL,
    event TEXT NOT NULL,
    user_id INTEGER REFERENCES users (id),
    actor_user_id INTEGER REFERENCES users (id),
    reason TEXT
);

CREATE INDEX identity_events_company ON identity_events (company_id, at);
