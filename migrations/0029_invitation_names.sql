-- The name a manager pasted with an address ("Ada Lovelace <ada@example.org>"): the invitation
-- greets the person by it and the accept page offers it. NULL when only an address was given.
ALTER TABLE invitations ADD COLUMN name TEXT;
