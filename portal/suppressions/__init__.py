"""The suppression list pages: admins search, add and remove addresses, with reasons."""
