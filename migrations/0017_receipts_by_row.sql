-- The console's email page lists the row's receipts. Nearly all carry the row's provider message
-- ID (email_receipts_message finds them); the only others are receipts matched by the row's
-- outbox_id tag that could not settle it (outcome not_eligible, the row never got that ID).
-- Indexed on their own, few as they are, so the page never reads the whole receipts table and a
-- receipt costs no extra index write.
CREATE INDEX email_receipts_not_eligible_by_row ON email_receipts (outbox_id) WHERE outcome = 'not_eligible';
