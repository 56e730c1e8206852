"""The operator's console (/admin/outbox): every email, the ones that need a person, and their history."""
