"""Masking the secrets a URL can carry, and any email address, wherever a line is logged.

Links in emails carry bearer tokens in their path (an invitation, an unsubscribe, a password
reset): whoever holds the URL holds the link. The access log writes every path (portal.web.access_log),
and Flask logs an unhandled error as "Exception on <path>", so both mask them here.
"""

from __future__ import annotations

import logging
import re

# Path segments that are bearer secrets.
SECRET_PATHS = re.compile(r"(/(?:invitations/accept|unsubscribe|password/reset)/)[^/?#\s\"]+")
# Query values that are secrets: a provider's authorization code and state on the sign-in callback
# (/login/sso/callback?code=…&state=…), single-use but not for a log to keep.
SECRET_QUERY_VALUES = re.compile(r"([?&](?:code|state|id_token|access_token)=)[^&#\s\"]+")
# An address, also percent-encoded (%40) as it appears in query strings.
ADDRESS = re.compile(r"[^\s/?#&=\"'<>]+(?:@|%40)[^\s/?#&=\"'<>]+", re.IGNORECASE)


def redact(value: str) -> str:
    return ADDRESS.sub("[address]", mask_link_tokens(value))


def mask_link_tokens(value: str) -> str:
    """The links' bearer tokens masked, the rest as it was (the console shows an email this way)."""
    return SECRET_QUERY_VALUES.sub(r"\1[token]", SECRET_PATHS.sub(r"\1[token]", value))


class RedactingFilter(logging.Filter):
    """On a handler: a record's message with link tokens and addresses masked."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True
