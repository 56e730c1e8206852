"""The decision to send: an intent written in the area's own transaction, composed into batches,
and published to the queue after the commit; the relay publishes what the queue lost."""
