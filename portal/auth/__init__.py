"""Accounts and sign-in: companies, users, password hashing."""
