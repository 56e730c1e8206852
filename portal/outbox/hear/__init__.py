"""What the provider says after an email was accepted: receipts, lookups of those that never
came, the reconciliation of what was sent with what was heard, and the suppression list."""
