-- The daily comparison of Resend's suppression list with the portal's (issue 49, part 3;
-- portal/outbox/hear/suppression_comparison.py).
--
-- Each pass, complete or not: when it ran, why it stopped early (NULL: it read Resend's whole
-- list), how many entries it read at Resend, and, for a complete pass, the comparison's counts.
CREATE TABLE email_suppression_passes (
    id INTEGER PRIMARY KEY,
    ran_at TEXT NOT NULL,
    stopped TEXT,
    listed INTEGER NOT NULL,
    on_both INTEGER,
    only_at_provider INTEGER,
    only_in_portal INTEGER,
    CHECK ((stopped IS NULL) = (on_both IS NOT NULL AND only_at_provider IS NOT NULL AND only_in_portal IS NOT NULL))
);

CREATE INDEX email_suppression_passes_ran ON email_suppression_passes (ran_at);
CREATE INDEX email_suppression_passes_complete ON email_suppression_passes (ran_at) WHERE stopped IS NULL;

-- The differences the last complete pass found, one per entry: the address, or an erased person's
-- keyed hash (never the address of an erased person); which list has it, and why the other has
-- not (`cause`); Resend's ID of its entry when Resend has it; since which pass, and the last pass
-- that still found it. An operator's offer acted on deletes it, in the change's own transaction.
CREATE TABLE email_suppression_differences (
    id INTEGER PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    cause TEXT NOT NULL
        CHECK (cause IN ('removed_in_portal', 'never_in_portal', 'removed_at_provider', 'never_at_provider')),
    provider_id TEXT,
    since TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    CHECK ((cause IN ('removed_in_portal', 'never_in_portal')) = (provider_id IS NOT NULL))
);

-- The last complete pass that found the entry at Resend too: an entry Resend had and has no more
-- was removed there (NULL: never seen there).
ALTER TABLE email_suppressions ADD COLUMN at_provider_seen_at TEXT;

-- Which list an admin's change changed: the portal's, or Resend's (an offer of the comparison,
-- acted on through Resend's API). Every earlier change was the portal's.
ALTER TABLE email_suppression_events ADD COLUMN side TEXT NOT NULL DEFAULT 'portal'
    CHECK (side IN ('portal', 'provider'));
CREATE INDEX email_suppression_differences_since ON email_suppression_differences (since, id);
