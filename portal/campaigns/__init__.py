"""Campaigns: admin-written emails to an audience, one outbox row per recipient, with preview,
test send, schedule, cancel and one-click unsubscribe."""
