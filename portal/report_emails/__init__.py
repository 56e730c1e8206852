"""Report emails: a manager subscribes to monthly or quarterly reports; the schedule writes each
closed period's run and its emails, a backfill re-sends one, and a test send shows one now.

The report itself (figures, PDF) is the reports area's, used through its face.
"""
