-- The language a person reads the portal and their email in (NULL: not chosen, their browser's
-- decides), and their company's, for when nothing else says (portal/core/i18n.py).
ALTER TABLE users ADD COLUMN language TEXT CHECK (language IS NULL OR language IN ('en', 'nb'));
ALTER TABLE companies ADD COLUMN language TEXT NOT NULL DEFAULT 'en' CHECK (language IN ('en', 'nb'));
