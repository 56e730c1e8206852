-- Reports: each company's report settings, and the years it has closed.

-- What a manager sets once: where the company's fiscal year begins, and what an hour of
-- employee time costs the company (for B4SI "time"), with the share of hours given in company time.
CREATE TABLE company_report_settings (
    company_id INTEGER PRIMARY KEY REFERENCES companies (id),
    fiscal_year_start_month INTEGER NOT NULL DEFAULT 1
        CHECK (fiscal_year_start_month BETWEEN 1 AND 12),
    hourly_cost TEXT,                      -- decimal text, e.g. '650.00'; NULL until entered
    currency TEXT NOT NULL DEFAULT 'NOK',
    company_time_percent INTEGER NOT NULL DEFAULT 100
        CHECK (company_time_percent BETWEEN 0 AND 100),
    updated_by INTEGER REFERENCES users (id),
    updated_at TEXT NOT NULL
);

-- A closed (calendar or fiscal) year: the filed figures, frozen. The report for that period reads
-- the snapshot; corrections received later are shown beside it as changes since close.
CREATE TABLE report_closures (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id),
    year_label TEXT NOT NULL,
    period_start TEXT NOT NULL,            -- local date YYYY-MM-DD, inclusive
    period_end TEXT NOT NULL,              -- local date YYYY-MM-DD, inclusive
    closed_by INTEGER NOT NULL REFERENCES users (id),
    closed_at TEXT NOT NULL,
    report_id TEXT NOT NULL UNIQUE,
    snapshot TEXT NOT NULL,                -- JSON: every figure of the report, per programme filter
    UNIQUE (company_id, period_start)
);

-- The report reads a company's attended sessions in a time range: with every column it needs in
-- the index, a year of a large company is read from the index alone.
CREATE INDEX attendance_sessions_report
    ON attendance_sessions (company_id, held_at, status, platform, user_id, minutes);

-- The same rows in volunteer order: the per-volunteer figures seek each volunteer's range and
-- group without sorting the period's sessions.
CREATE INDEX attendance_sessions_people
    ON attendance_sessions (company_id, user_id, platform, held_at, status, minutes);
