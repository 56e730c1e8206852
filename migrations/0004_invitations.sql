-- Invitations to join a partner company: colleagues as volunteers (employees), or an approved
-- applicant as the company's first manager. The token is never stored: only its nonce and hash.

CREATE TABLE invitations (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id),
    email TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT 'employee' CHECK (role IN ('employee', 'manager')),
    programme TEXT CHECK (programme IS NULL OR programme IN ('language', 'mentorship')),
    token_nonce TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    invited_by INTEGER REFERENCES users (id),
    send_count INTEGER NOT NULL DEFAULT 1,
    expires_at TEXT NOT NULL,
    accepted_at TEXT,
    accepted_user_id INTEGER REFERENCES users (id),
    created_at TEXT NOT NULL,
    CHECK (role = 'manager' OR programme IS NOT NULL)
);

-- One open invitation per address and company; a renewed one reuses the row.
CREATE UNIQUE INDEX invitations_company_email ON invitations (company_id, email);
