-- A bounce receipt's class (portal/outbox/ground/bounce_classes.py: no_mailbox, mailbox_full, blocked,
-- spam, temporary), from Resend's bounce.type and bounce.subType, kept with the receipt so that a page
-- can count them and a soft bounce (mailbox_full, temporary) can find the address's earlier ones.
-- NULL for every other receipt, and for bounces received before this migration.
ALTER TABLE email_receipts ADD COLUMN bounce_class TEXT
    CHECK (bounce_class IS NULL OR bounce_class IN ('no_mailbox', 'mailbox_full', 'blocked', 'spam', 'temporary'));
