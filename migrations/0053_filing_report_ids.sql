-- One filing, one report ID (issue 47, item 2). Each filed period (filing_releases: one row per
-- company and period, written by its first PDF download, report email or year close) keeps the ID
-- that every copy states: each PDF download, each report email and its attachment, the report page,
-- the year's closure, and /verify/<report ID>. Made once, at random (portal/reports/filing.py
-- `new_report_id`), so it cannot be guessed from the company and period to read a filing on /verify.
ALTER TABLE filing_releases ADD COLUMN report_id TEXT;

-- A closed year's filing takes the ID its closure already stated.
UPDATE filing_releases SET report_id = (
    SELECT c.report_id FROM report_closures c
    WHERE c.company_id = filing_releases.company_id
      AND c.period_start = filing_releases.period_start AND c.period_end = filing_releases.period_end
) WHERE report_id IS NULL;

-- Every other filing made before this migration gets one now, in the same form.
UPDATE filing_releases SET report_id = 'TEEI-' || company_id || '-' || replace(period_start, '-', '') || '-'
    || replace(period_end, '-', '') || '-' || upper(hex(randomblob(4)))
WHERE report_id IS NULL;

CREATE UNIQUE INDEX filing_releases_report_id ON filing_releases (report_id);
