-- What a user the company's directory creates over SCIM becomes (issue 48, item 2; portal/scim/).
--
-- company_identity_providers.directory_creates: 'invite' (the default) sends them the invitation the
-- Invitations page sends; 'provision' makes their volunteer account at once. A company without a
-- sign-in settings row invites.
ALTER TABLE company_identity_providers ADD COLUMN directory_creates TEXT NOT NULL DEFAULT 'invite'
    CHECK (directory_creates IN ('invite', 'provision'));

-- An invitation the directory created: its SCIM id is 'inv-' || invitations.id, before acceptance and
-- after (accepted_user_id leads to the account). scim_deleted_at: the directory deleted it (404 after).
ALTER TABLE invitations ADD COLUMN scim_created_at TEXT;
ALTER TABLE invitations ADD COLUMN scim_deleted_at TEXT;

CREATE INDEX invitations_scim_accepted ON invitations (accepted_user_id) WHERE scim_created_at IS NOT NULL;
