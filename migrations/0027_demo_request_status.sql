-- Where sales stands with each demo request (new, contacted, done) and a note for colleagues.
-- Kept on the submission: a person who asks again is a new request to follow up.
ALTER TABLE demo_submissions ADD COLUMN status TEXT NOT NULL DEFAULT 'new'
    CHECK (status IN ('new', 'contacted', 'done'));
ALTER TABLE demo_submissions ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE demo_submissions ADD COLUMN status_changed_at TEXT;
ALTER TABLE demo_submissions ADD COLUMN status_changed_by INTEGER REFERENCES users (id);

CREATE INDEX demo_submissions_status ON demo_submissions (status, created_at);
