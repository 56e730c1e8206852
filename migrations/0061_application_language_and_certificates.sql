-- Two things, in the one migration number issue 47's last items were given.
--
-- 1. The language of the page a partner application was sent from (issue 47, item 8). The decision
--    email goes to an applicant who has no account yet: it is written in this language, as their
--    confirmation was (portal/applications/operations.py). NULL: an application from before
--    languages were stored, answered in English.
ALTER TABLE company_applications ADD COLUMN language TEXT CHECK (language IS NULL OR language IN ('en', 'nb'));

-- 2. Volunteering certificates (issue 47, item 9): what each one states, under its own ID, so that
--    /verify/<certificate ID> confirms it to whoever the volunteer shows it to. One statement, one
--    ID: a download that states the same (person, period, name, company, hours, sessions) again is
--    the same certificate, with the same ID and issue date; new sessions make a new one. The row
--    names a person, so it goes when they are erased (portal/privacy/operations.py).
CREATE TABLE volunteer_certificates (
    id INTEGER PRIMARY KEY,
    certificate_id TEXT NOT NULL UNIQUE,
    user_id INTEGER NOT NULL REFERENCES users (id),
    name TEXT NOT NULL,
    company_name TEXT NOT NULL,
    period_start TEXT NOT NULL,
    period_end TEXT NOT NULL,
    minutes INTEGER NOT NULL CHECK (minutes > 0),
    sessions INTEGER NOT NULL CHECK (sessions > 0),
    programmes TEXT NOT NULL, -- JSON: each programme's minutes and sessions, as printed
    issued_on TEXT NOT NULL, -- the local day it was first issued: every copy states it
    created_at TEXT NOT NULL,
    CHECK (period_start <= period_end)
);

CREATE INDEX volunteer_certificates_user ON volunteer_certificates (user_id, period_start, period_end);
