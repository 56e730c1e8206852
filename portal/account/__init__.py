"""A person's own account: changing their name and password, and resetting a forgotten password."""
