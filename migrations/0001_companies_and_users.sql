-- Partner companies and the people who sign in.
-- An admin belongs to no company; managers and employees belong to exactly one.

CREATE TABLE companies (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin', 'manager', 'employee')),
    company_id INTEGER REFERENCES companies (id),
    programme TEXT CHECK (programme IS NULL OR programme IN ('language', 'mentorship')),
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CHECK ((role = 'admin') = (company_id IS NULL))
);

CREATE INDEX users_company ON users (company_id, role);

-- Hours are never logged by hand: they come from the sessions a volunteer attended.
CREATE TABLE session_attendance (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users (id),
    programme TEXT NOT NULL CHECK (programme IN ('language', 'mentorship')),
    held_at TEXT NOT NULL,
    minutes INTEGER NOT NULL CHECK (minutes > 0),
    UNIQUE (user_id, held_at)
);
