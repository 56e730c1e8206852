-- A colleague's department, as a manager's CSV import of colleagues gives it (issue 48, part 3):
-- kept with the invitation and carried to the account (users.department, 0050) when it is accepted.
ALTER TABLE invitations ADD COLUMN department TEXT;
