-- Issue 50, item 4: company time and own time. A session record says whether it was held in working
-- time (0, the default: every platform that sends no `volunteer_time` keeps working as before) or in
-- the volunteer's own time (1). Own-time hours count in the employer's report only for a volunteer
-- who chose so; the choice is kept with its date, every change a new row (the latest one counts).
ALTER TABLE attendance_sessions ADD COLUMN own_time INTEGER NOT NULL DEFAULT 0 CHECK (own_time IN (0, 1));

-- The report's covering indexes carry the new column, so the report still reads no table rows.
DROP INDEX attendance_sessions_report;
CREATE INDEX attendance_sessions_report
    ON attendance_sessions (company_id, held_at, status, platform, user_id, minutes, own_time);
DROP INDEX attendance_sessions_people;
CREATE INDEX attendance_sessions_people
    ON attendance_sessions (company_id, user_id, platform, held_at, status, minutes, own_time);

CREATE TABLE own_time_choices (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users (id),
    counted INTEGER NOT NULL CHECK (counted IN (0, 1)),  -- 1: own-time hours count in the employer's report
    chosen_at TEXT NOT NULL
);
CREATE INDEX own_time_choices_user ON own_time_choices (user_id, id);
