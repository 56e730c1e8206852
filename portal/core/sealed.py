"""Secrets the portal must read back (a company's OpenID Connect client secret), sealed at rest.

Fernet (AES-128-CBC with an HMAC-SHA256, from `cryptography`) under a key derived from the
settings' SECRET_KEY with HKDF, for this one purpose: the database alone does not give the secret
away, and a changed SECRET_KEY makes every sealed value unreadable (the company's admin enters the
client secret again; `unseal` says so by raising SealedValueUnreadable, never with the value).
"""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_PURPOSE = b"portal sealed values v1"


class SealedValueUnreadable(Exception):
    """The sealed value was made under another SECRET_KEY, or was changed."""


def _fernet(secret_key: str) -> Fernet:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_PURPOSE).derive(secret_key.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def seal(secret_key: str, value: str) -> str:
    return _fernet(secret_key).encrypt(value.encode()).decode()


def unseal(secret_key: str, sealed: str) -> str:
    try:
        return _fernet(secret_key).decrypt(sealed.encode()).decode()
    except InvalidToken:
        raise SealedValueUnreadable() from None
