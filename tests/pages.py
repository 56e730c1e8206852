"""Reading the portal's pages in tests as a browser would submit them."""

from __future__ import annotations

import re


def csrf_from(page: str) -> str:
    """The CSRF token of the first form on a page."""
    match = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page) or re.search(
        r'name="csrf_token" value="([^"]+)"', page
    )
    assert match, "no CSRF token on the page"
    return match.group(1)
