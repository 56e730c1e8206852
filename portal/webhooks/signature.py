"""Checking the Svix signature of a provider receipt over its raw body.

Errors carry no part of the body: bodies hold addresses, and these messages reach logs.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from svix.webhooks import Webhook

SIGNATURE_HEADERS = ("svix-id", "svix-timestamp", "svix-signature")


class SignatureError(Exception):
    """The receipt is not signed with our secret, or its timestamp is more than 5 minutes off."""


class WebhookSecretError(RuntimeError):
    """Our own secret cannot be used: configuration, not input."""


@lru_cache(maxsize=4)
def _verifier(secret: str) -> Webhook:
    try:
        return Webhook(secret)
    except Exception as error:
        raise WebhookSecretError(f"the webhook secret is unusable ({type(error).__name__})") from None


def verify_signature(secret: str, body: bytes, headers: Mapping[str, str]) -> str:
    """Check the Svix signature over the raw body; return the event ID (svix-id).

    svix raises WebhookVerificationError for a bad signature or timestamp, but plain ValueError,
    binascii.Error or UnicodeDecodeError for malformed headers or body, and 2.x returns None on
    success, so every exception means "not verified" and the return value is not used.
    """
    verifier = _verifier(secret)
    signed = {name: headers.get(name) or "" for name in SIGNATURE_HEADERS}
    try:
        verifier.verify(body, signed)
    except Exception as error:
        raise SignatureError(type(error).__name__) from None
    return signed["svix-id"]
