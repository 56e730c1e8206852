"""What a person reads and does: email state for the pages (reads.py, listing.py), an email's
history as codes (events.py), the operator's actions, retention, a person's data, /metrics."""
