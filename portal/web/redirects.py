"""Where a page may send a person next: only a path on this portal.

A `next` comes from the request (the sign-in page's query, the language switch's form), so anyone
can write one into a link. A browser reads a reference as a path on the same site only when it
starts with one slash not followed by another. It reads a backslash as a slash and drops tabs and
newlines anywhere, so "/\\evil.example" and "/<tab>/evil.example" both reach another host; and a
control character in a Location header is an error (500) or worse. So a path holding a backslash or
any control character is refused, whatever follows it.
"""

from __future__ import annotations

import unicodedata


def same_site_path(target: str | None) -> str | None:
    """`target` if it is a path on this portal ("/reports?from=…"), else None."""
    if not target or not target.startswith("/") or target.startswith("//"):
        return None
    if "\\" in target or any(unicodedata.category(char) == "Cc" for char in target):
        return None
    return target
