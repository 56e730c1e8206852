"""The engine's ground: what every part of it stands on. The statuses, the statement books of the
email tables (rows.py, batch_rows.py), the families and their retry policies, rendering, the queues'
names, the provider's answers, the context a part is handed, locks, periodic passes and counters."""
