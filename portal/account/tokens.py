"""Password reset tokens that the database never holds (as invitation tokens: portal/invitations/tokens.py).

The database keeps a random nonce and the SHA-256 of the token; the token is an HMAC of the nonce
under SECRET_KEY, recomputed by the worker when it renders the email. A copy of the database or of
the outbox's template input alone resets no password.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from portal.core.settings import Settings

RESET_PATH = "/password/reset/"


def new_nonce() -> str:
    return secrets.token_hex(16)


def token_for(secret_key: str, nonce: str) -> str:
    # A purpose of its own, so no invitation token can ever be a reset token.
    digest = hmac.new(secret_key.encode(), f"password-reset:{nonce}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def reset_url(settings: Settings, nonce: str) -> str:
    return f"{settings.public_base_url}{RESET_PATH}{token_for(settings.secret_key, nonce)}"
