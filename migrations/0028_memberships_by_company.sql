-- The report starts at the company's start: its first membership is read per page view, by index.
CREATE INDEX IF NOT EXISTS company_memberships_company ON company_memberships (company_id, started_at);
