-- Companies applying to become partners, the admins' decisions, and demo requests.
-- AUTOINCREMENT on rows whose IDs go into email idempotency keys: an ID is never reused, even after
-- a row is deleted, so a new row can never collide with an old email's key.

-- One row per application. `company_key` is the company name as ensure_company compares it
-- (spaces collapsed, lower case). A contact has at most one open application per company: a
-- replayed form (a double click) meets that index and writes nothing.
CREATE TABLE company_applications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    company_name TEXT NOT NULL,
    company_key TEXT NOT NULL,
    contact_name TEXT NOT NULL,
    contact_email TEXT NOT NULL,
    employee_count INTEGER NOT NULL CHECK (employee_count >= 1),
    message TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'new' CHECK (state IN ('new', 'info_requested', 'approved', 'declined')),
    decision_count INTEGER NOT NULL DEFAULT 0,
    company_id INTEGER REFERENCES companies (id),  -- set when approved
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CHECK ((state = 'approved') = (company_id IS NOT NULL))
);

CREATE UNIQUE INDEX company_applications_one_open ON company_applications (contact_email, company_key)
    WHERE state IN ('new', 'info_requested');
CREATE INDEX company_applications_state ON company_applications (state, created_at);

-- Every decision, numbered per application. (application_id, sequence) is unique, so a replayed
-- decision cannot be recorded twice; its email's key is application:{id}:decision:{sequence}.
CREATE TABLE application_decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    application_id INTEGER NOT NULL REFERENCES company_applications (id),
    sequence INTEGER NOT NULL CHECK (sequence >= 1),
    decision TEXT NOT NULL CHECK (decision IN ('approve', 'decline', 'request_info')),
    note TEXT NOT NULL DEFAULT '',
    decided_by INTEGER NOT NULL REFERENCES users (id),
    invitation_id INTEGER REFERENCES invitations (id),  -- the first manager's invitation, on approval
    outbox_id TEXT NOT NULL,                            -- the decision email
    created_at TEXT NOT NULL,
    UNIQUE (application_id, sequence)
);

-- Someone who asked for a demo, one row per address; a later request updates it.
CREATE TABLE demo_leads (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    company TEXT NOT NULL,
    request_count INTEGER NOT NULL DEFAULT 1,
    first_requested_at TEXT NOT NULL,
    last_requested_at TEXT NOT NULL
);

-- Each demo form as submitted. `replay_key` is the SHA-256 of the normalised fields while the
-- submission may still be replayed (a double click, a resent form); an older submission's key is
-- retired (suffixed with its ID) when the same content comes again later, so the unique index
-- guarantees one live submission per content.
CREATE TABLE demo_submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    lead_id INTEGER NOT NULL REFERENCES demo_leads (id),
    replay_key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    company TEXT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);

CREATE INDEX demo_submissions_lead ON demo_submissions (lead_id, created_at);
