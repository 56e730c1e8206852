-- Every filing output a company has released (a PDF downloaded, a report email's attachment, a
-- closed year): its figures as first filed, so a later copy of the period is the same, and its mask,
-- so later outputs choose what to hide knowing what this one showed (portal/reports/filing.py).
-- No names: the figures are counts and sums.
CREATE TABLE filing_releases (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id),
    period_start TEXT NOT NULL,
    period_end TEXT NOT NULL,
    figures TEXT NOT NULL,
    mask TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('download', 'email', 'close')),
    created_at TEXT NOT NULL,
    UNIQUE (company_id, period_start, period_end)
);
