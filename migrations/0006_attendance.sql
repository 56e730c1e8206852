-- Attendance pushed by the programme platforms, and the company history hours are attributed by.
-- Supersedes session_attendance (0001): its rows move into attendance_sessions and it is dropped.

-- Which company a user belonged to, and when. One open row (ended_at NULL) per user: their
-- current company. A session's hours belong to the company of the membership in force when it
-- was held, so a colleague who moves on leaves their past hours with the old company.
CREATE TABLE company_memberships (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users (id),
    company_id INTEGER NOT NULL REFERENCES companies (id),
    started_at TEXT NOT NULL,                     -- fixed-width UTC (portal/outbox/clock.py)
    ended_at TEXT,                                -- NULL while current
    CHECK (ended_at IS NULL OR ended_at >= started_at)
);

CREATE INDEX company_memberships_user ON company_memberships (user_id, started_at);
CREATE UNIQUE INDEX company_memberships_current ON company_memberships (user_id) WHERE ended_at IS NULL;

-- Every existing user with a company: a membership from the account's creation. (Sessions held
-- before a user's first membership count for that first company.)
INSERT INTO company_memberships (user_id, company_id, started_at)
SELECT id, company_id, strftime('%Y-%m-%dT%H:%M:%f', created_at) || '000Z'
FROM users WHERE company_id IS NOT NULL;

-- One row per session and volunteer, as the platform last described it. A later updated_at
-- replaces the row; an older one is ignored. Only status 'attended' counts towards hours.
-- volunteer_email is lower-cased; user_id and company_id stay NULL until an account with that
-- address exists (unmatched), then company_id is the company at held_at (company_memberships).
CREATE TABLE attendance_sessions (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL CHECK (platform IN ('language', 'mentorship')),
    session_id TEXT NOT NULL,
    volunteer_email TEXT NOT NULL,
    user_id INTEGER REFERENCES users (id),
    company_id INTEGER REFERENCES companies (id),
    held_at TEXT NOT NULL,                        -- fixed-width UTC
    minutes INTEGER NOT NULL CHECK (minutes BETWEEN 1 AND 600),
    status TEXT NOT NULL CHECK (status IN ('attended', 'cancelled', 'no_show')),
    updated_at TEXT NOT NULL,                     -- the platform's version of the record, fixed-width UTC
    received_at TEXT NOT NULL,                    -- when this version reached us
    source TEXT NOT NULL CHECK (source IN ('api', 'import', 'legacy')),
    UNIQUE (platform, session_id, volunteer_email),
    CHECK (company_id IS NULL OR user_id IS NOT NULL)
);

-- The report reads by company and by volunteer; unmatched rows are in neither index (they count
-- nowhere yet), only in the one that finds them when their account is created.
CREATE INDEX attendance_sessions_company ON attendance_sessions (company_id, held_at) WHERE company_id IS NOT NULL;
CREATE INDEX attendance_sessions_user ON attendance_sessions (user_id, held_at) WHERE user_id IS NOT NULL;
CREATE INDEX attendance_sessions_unmatched ON attendance_sessions (volunteer_email) WHERE user_id IS NULL;

-- The old table's rows: attended sessions of known users, with the company they have now (the
-- only membership there is). 'legacy' marks that no platform described them.
INSERT INTO attendance_sessions (platform, session_id, volunteer_email, user_id, company_id, held_at,
                                 minutes, status, updated_at, received_at, source)
SELECT a.programme, 'legacy-' || a.id, u.email, u.id, u.company_id,
       strftime('%Y-%m-%dT%H:%M:%f', a.held_at) || '000Z', a.minutes, 'attended',
       strftime('%Y-%m-%dT%H:%M:%f', a.held_at) || '000Z',
       strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z', 'legacy'
FROM session_attendance a JOIN users u ON u.id = a.user_id;

DROP TABLE session_attendance;

-- The replay guard of POST /api/attendance: one row per webhook-id, written in the same
-- transaction as the sessions it carried, with the counts it was answered with.
CREATE TABLE attendance_deliveries (
    webhook_id TEXT PRIMARY KEY,
    received_at TEXT NOT NULL,
    received INTEGER NOT NULL,
    applied INTEGER NOT NULL,
    unmatched INTEGER NOT NULL,
    stale INTEGER NOT NULL
);
