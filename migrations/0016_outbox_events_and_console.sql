-- The operator's console: every outbox row's history, and the indexes its list pages by.

-- Append-only history of each outbox row. Triggers on email_outbox write one event per state
-- change, inside the statement (so the transaction) that makes the change: no engine code has to
-- remember to record it, and no extra round trip is made on the send path. Operator actions are
-- written by portal/outbox/operator.py in the same transaction as the change they make.
-- Nothing personal is kept here: no address, no subject or body (last_error holds reason codes,
-- an operator's reason is the operator's own note). So erasing a row's recipient and template
-- input (the retention purge) leaves its events as they are, and adds an 'erased' event.
-- No foreign key to email_outbox: the history outlives any rebuild of that table. A migration that
-- rebuilds email_outbox (as 0014 did) drops these triggers with it and must create them again.
CREATE TABLE email_outbox_events (
    id INTEGER PRIMARY KEY,
    outbox_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('created', 'changed', 'erased', 'operator')),
    status_before TEXT,
    status_after TEXT,
    attempt INTEGER,                      -- the row's attempt_count after the change
    outcome_unknown INTEGER,              -- 1 once an attempt may have reached the provider unanswered
    last_error TEXT,                      -- the reason code after the change (the provider's answer, classified)
    provider_message_id TEXT,
    next_attempt_at TEXT,
    published INTEGER NOT NULL DEFAULT 0, -- the change records a publication to the queue
    first_attempt INTEGER NOT NULL DEFAULT 0, -- the payload was frozen: the first provider request follows
    action TEXT,                          -- operator events: retry, confirm_sent, send_again, cancel
    actor_user_id INTEGER REFERENCES users (id),
    reason TEXT,
    related_outbox_id TEXT,               -- send_again: the new row; the new row: the one it replaces
    created_at TEXT NOT NULL,
    CHECK ((kind = 'operator') = (actor_user_id IS NOT NULL AND action IS NOT NULL AND reason IS NOT NULL))
);

CREATE INDEX email_outbox_events_row ON email_outbox_events (outbox_id, id);

CREATE TRIGGER email_outbox_events_append_only_update BEFORE UPDATE ON email_outbox_events
BEGIN SELECT RAISE(ABORT, 'email_outbox_events is append-only'); END;

CREATE TRIGGER email_outbox_events_append_only_delete BEFORE DELETE ON email_outbox_events
BEGIN SELECT RAISE(ABORT, 'email_outbox_events is append-only'); END;

-- Event times have the width of portal/outbox/clock.py's, so they sort and display alike.
CREATE TRIGGER email_outbox_events_on_insert AFTER INSERT ON email_outbox
BEGIN
    INSERT INTO email_outbox_events (outbox_id, kind, status_after, attempt, outcome_unknown, created_at)
    VALUES (new.id, 'created', new.status, new.attempt_count, new.outcome_unknown,
            strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')); END;

-- A publication changes enqueued_at (a waiting row) or only relay_since (a republished retry or
-- expired claim); every other change also moves the status, the attempt or the retry time.
CREATE TRIGGER email_outbox_events_on_change
AFTER UPDATE OF status, attempt_count, first_attempt_at, enqueued_at, provider_message_id,
    next_attempt_at, last_error, outcome_unknown, relay_since ON email_outbox
WHEN old.status IS NOT new.status OR old.attempt_count IS NOT new.attempt_count
    OR old.first_attempt_at IS NOT new.first_attempt_at OR old.enqueued_at IS NOT new.enqueued_at
    OR old.provider_message_id IS NOT new.provider_message_id OR old.next_attempt_at IS NOT new.next_attempt_at
    OR old.last_error IS NOT new.last_error OR old.outcome_unknown IS NOT new.outcome_unknown
    OR old.relay_since IS NOT new.relay_since
BEGIN
    INSERT INTO email_outbox_events (outbox_id, kind, status_before, status_after, attempt, outcome_unknown,
        last_error, provider_message_id, next_attempt_at, published, first_attempt, created_at)
    VALUES (new.id, 'changed', old.status, new.status, new.attempt_count, new.outcome_unknown,
        new.last_error, new.provider_message_id, new.next_attempt_at,
        old.enqueued_at IS NOT new.enqueued_at
            OR (old.relay_since IS NOT new.relay_since AND new.relay_since IS NOT NULL
                AND old.status = new.status AND old.attempt_count = new.attempt_count
                AND old.next_attempt_at IS new.next_attempt_at),
        old.first_attempt_at IS NULL AND new.first_attempt_at IS NOT NULL,
        strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')); END;

CREATE TRIGGER email_outbox_events_on_erase AFTER UPDATE OF recipient ON email_outbox
WHEN old.recipient != '' AND new.recipient = ''
BEGIN
    INSERT INTO email_outbox_events (outbox_id, kind, status_before, status_after, attempt, created_at)
    VALUES (new.id, 'erased', old.status, new.status, new.attempt_count,
            strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')); END;

-- The console's list, newest first, paged by (created_at, id): one index per way of filtering it,
-- so a page is an index range at any table size (a recipient's rows come from the recipient index
-- and are sorted: one person's emails are few).
CREATE INDEX email_outbox_console_created ON email_outbox (created_at, id);
CREATE INDEX email_outbox_console_status ON email_outbox (status, created_at, id);
CREATE INDEX email_outbox_console_family ON email_outbox (family, created_at, id);
CREATE INDEX email_outbox_console_family_status ON email_outbox (family, status, created_at, id);
