"""Invitations: a manager invites colleagues; an invited person accepts and gets an account."""
