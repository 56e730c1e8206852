-- A campaign in each reader's language: the English version is `subject` and `body` (every campaign
-- has it); the Norwegian one, when the admin wrote one, is `subject_nb` and `body_nb` (Markdown too),
-- both or neither. Each recipient gets the version of their reading language (their own choice,
-- else their company's), English when there is no version in it.
ALTER TABLE campaigns ADD COLUMN subject_nb TEXT;
ALTER TABLE campaigns ADD COLUMN body_nb TEXT CHECK ((body_nb IS NULL) = (subject_nb IS NULL));

-- The version each recipient gets ('en' or 'nb'), fixed with the list when sending starts, so the
-- campaign's page counts who got which. NULL for lists fixed before versions existed: English.
ALTER TABLE campaign_recipients ADD COLUMN language TEXT CHECK (language IS NULL OR language IN ('en', 'nb'));
