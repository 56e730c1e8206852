-- Streams and topics (issue 49, part 2). A campaign is broadcast mail and belongs to one topic;
-- a recipient may opt out of a topic (campaign_topic_optouts) or of every campaign
-- (campaign_unsubscribes, as before). Neither ever touches transactional email.
--
-- The topics, by code; their words live at the edge (portal/campaigns/topics.py), in each
-- reader's language. `position` is the order the preference page and the campaign form show.
CREATE TABLE campaign_topics (
    code TEXT PRIMARY KEY CHECK (code GLOB '[a-z]*' AND code NOT GLOB '*[^a-z_]*'),
    position INTEGER NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);
INSERT INTO campaign_topics (code, position, created_at) VALUES
    ('programme_news', 1, '2026-12-07T00:00:00.000000Z'),
    ('partner_news', 2, '2026-12-07T00:00:00.000000Z'),
    ('events', 3, '2026-12-07T00:00:00.000000Z');

-- Every campaign so far was programme news. (No REFERENCES: SQLite adds no column with both a
-- foreign key and a non-null default; operations.py checks the code against campaign_topics.)
ALTER TABLE campaigns ADD COLUMN topic TEXT NOT NULL DEFAULT 'programme_news';

-- Who asked for no more campaigns of one topic, and through which campaign's link (if any).
CREATE TABLE campaign_topic_optouts (
    user_id INTEGER NOT NULL REFERENCES users (id),
    topic TEXT NOT NULL REFERENCES campaign_topics (code),
    campaign_id INTEGER REFERENCES campaigns (id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, topic)
);
