-- Nothing reads receipts by outcome but a test helper (reads.receipt_counts); /metrics counts
-- outcomes as they happen (portal_receipts_total). The index cost every receipt one more write.
DROP INDEX IF EXISTS email_receipts_outcome;
