"""The Standard Webhooks signature on attendance deliveries (webhook-id, -timestamp, -signature).

Verified with the `standardwebhooks` library: HMAC-SHA256 over id.timestamp.body, timestamps
within 5 minutes either way. Nothing here reads the body's content.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from standardwebhooks.webhooks import Webhook

HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")
MAX_WEBHOOK_ID_LENGTH = 256


class SignatureError(Exception):
    """Not signed with our secret, a timestamp more than 5 minutes off, or unusable headers."""


@lru_cache(maxsize=4)
def _verifier(secret: str) -> Webhook:
    # The secret was checked at start-up (Settings); an error here is configuration, not input,
    # and its message must not carry the secret.
    try:
        return Webhook(secret)
    except Exception as error:
        raise RuntimeError(f"the attendance webhook secret is unusable ({type(error).__name__})") from None


def verify(secret: str, body: bytes, headers: Mapping[str, str]) -> str:
    """Check the signature over the raw body; return the webhook-id.

    The library raises WebhookVerificationError for a wrong signature or timestamp, but ValueError,
    binascii.Error or UnicodeDecodeError for malformed headers or body: every exception means
    "not verified".
    """
    verifier = _verifier(secret)
    signed = {name: headers.get(name) or "" for name in HEADERS}
    if len(signed["webhook-id"]) > MAX_WEBHOOK_ID_LENGTH:
        raise SignatureError("webhook-id too long")
    try:
        verifier.verify(body, signed, json_parse=False)
    except Exception as error:
        raise SignatureError(type(error).__name__) from None
    return signed["webhook-id"]
