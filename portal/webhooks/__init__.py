"""The provider's receipts: POST /webhooks/resend, served by its own small WSGI app (app.py)."""
