"""The unsubscribe token in every campaign email: the recipient's user ID and the campaign's,
signed with SECRET_KEY (the campaign only says whose link it was, for the campaign's figures).

No expiry: RFC 8058 asks that the link keep working long after the email arrives (mail clients
call it whenever the person presses their unsubscribe button). It can only ever stop or restart
campaigns for that one person, and it carries no address.
"""

from __future__ import annotations

from functools import lru_cache

from itsdangerous import BadSignature, URLSafeSerializer

_SALT = "campaign-unsubscribe"


@lru_cache(maxsize=4)
def _serializer(secret_key: str) -> URLSafeSerializer:
    # One per key, not one per token: a batch of a campaign signs a hundred links, and building the
    # serializer was a third of each signature's cost. A few: tests run portals with their own keys.
    return URLSafeSerializer(secret_key, salt=_SALT)


def token_for(secret_key: str, user_id: int, campaign_id: int) -> str:
    return _serializer(secret_key).dumps([int(user_id), int(campaign_id)])


def read_token(secret_key: str, token: str) -> tuple[int, int] | None:
    """(user ID, campaign ID), or None for a token we did not sign."""
    try:
        value = _serializer(secret_key).loads(token)
    except BadSignature:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(type(part) is int for part in value)):
        return None
    return value[0], value[1]


def unsubscribe_url(base_url: str, secret_key: str, user_id: int, campaign_id: int) -> str:
    return f"{base_url}/unsubscribe/{token_for(secret_key, user_id, campaign_id)}"
