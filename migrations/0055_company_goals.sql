-- Issue 50, item 1: a company's yearly goals, one row per company and year. The year is the company's
-- report year (its fiscal year, or the calendar year), named by its first day. Goals are kept per
-- year, not as one current goal: next year's goal must not rewrite how last year measured up, and a
-- year's filed report states the goal of its own year. The goals a filing printed are also stored
-- with the filing (filing_releases.mask, "comparison"), so a later change never alters a filed copy.
CREATE TABLE company_goals (
    company_id INTEGER NOT NULL REFERENCES companies (id),
    year_start TEXT NOT NULL,                         -- YYYY-MM-DD, the first day of the report year
    hours TEXT,                                       -- a decimal, 0 or more; NULL: no hours goal
    participation TEXT,                               -- percent, 0 to 100; NULL: no participation goal
    updated_by INTEGER REFERENCES users (id),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (company_id, year_start)
);
