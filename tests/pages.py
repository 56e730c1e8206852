"""Reading the portal's pages in tests as a browser would submit them."""

from __future__ import annotations

import base64
import re
import zlib


def csrf_from(page: str) -> str:
    """The CSRF token of the first form on a page."""
    match = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page) or re.search(
        r'name="csrf_token" value="([^"]+)"', page
    )
    assert match, "no CSRF token on the page"
    return match.group(1)


def decoded_session(cookie: str) -> str:
    """What anyone holding Flask's session cookie reads in it (itsdangerous: base64 of JSON, zlib'd
    when the cookie starts with a dot): signed, not secret."""
    payload = cookie.lstrip(".").split(".")[0]
    raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    return (zlib.decompress(raw) if cookie.startswith(".") else raw).decode()
