"""Invitation tokens that the database never holds.

The database keeps a random nonce and the SHA-256 of the token; the token itself is an HMAC of the
nonce under SECRET_KEY, recomputed by whoever renders the link (the worker, for the email). So a
copy of the database alone opens no invitation, and the outbox row's template input holds only
the nonce.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from portal.core.settings import Settings

ACCEPT_PATH = "/invitations/accept/"


def new_nonce() -> str:
    return secrets.token_hex(16)


def token_for(secret_key: str, nonce: str) -> str:
    digest = hmac.new(secret_key.encode(), f"invitation:{nonce}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")  # 256 bits, URL-safe


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def accept_url(settings: Settings, nonce: str) -> str:
    return f"{settings.public_base_url}{ACCEPT_PATH}{token_for(settings.secret_key, nonce)}"
