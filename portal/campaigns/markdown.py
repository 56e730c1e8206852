"""A campaign body: Markdown as the admin wrote it, to sanitised HTML and plain text.

Both parts come from the same parse. markdown-it-py (CommonMark) with raw HTML switched off
turns the body into HTML, and nh3 (ammonia) cleans that HTML again with an allow-list, so
neither a typed <script> nor a `javascript:` link can reach an inbox or the preview page. The
text part walks the same tokens: links keep their address in brackets, lists keep their marks.
"""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

MAX_BODY_BYTES = 100 * 1024
ALLOWED_TAGS = {
    "p", "br", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "a", "ul", "ol", "li",
    "blockquote", "code", "pre", "hr",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


# A campaign's rows all render the same body: it is converted once per worker, not once per person.
@lru_cache(maxsize=8)
def to_html(body: str) -> str:
    html = _parser().render(body)
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
    )


@lru_cache(maxsize=1)
def _html_reader() -> MarkdownIt:
    """The same CommonMark with raw HTML recognised, only to find it (never to render)."""
    return MarkdownIt("commonmark", {"html": True})


@lru_cache(maxsize=8)
def has_raw_html(body: str) -> bool:
    """Whether the body holds raw HTML (`<b>`, `<table>`, a comment): the email shows it as text, tags
    and all, since the parser above leaves HTML off, so the preview says so."""
    return any(
        token.type in ("html_block", "html_inline")
        or any(child.type == "html_inline" for child in token.children or ())
        for token in _html_reader().parse(body)
    )


@lru_cache(maxsize=8)
def to_text(body: str) -> str:
    """The plain-text part: what the Markdown says, without its marks."""
    out: list[str] = []
    lists: list[list] = []  # a stack of [ordered, next number]
    for token in _parser().parse(body):
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append([kind == "ordered_list_open", int(token.attrGet("start") or 1)])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
            if not lists:
                out.append("\n")
        elif kind == "list_item_open":
            ordered, number = lists[-1]
            out.append("  " * (len(lists) - 1) + (f"{number}. " if ordered else "- "))
            lists[-1][1] += 1
        elif kind == "inline":
            out.append(_inline_text(token.children or []))
        elif kind == "paragraph_close":
            out.append("\n" if lists else "\n\n")
        elif kind == "heading_close":
            out.append("\n\n")
        elif kind in ("fence", "code_block"):
            out.append("".join(f"    {line}\n" for line in token.content.rstrip("\n").split("\n")) + "\n")
        elif kind == "hr":
            out.append("----\n\n")
    return "".join(out).strip() + "\n"


def _inline_text(children) -> str:
    parts: list[str] = []
    href_stack: list[tuple[str, int]] = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content or "")
        elif child.type == "link_open":
            href_stack.append((str(child.attrGet("href") or ""), len(parts)))
        elif child.type == "link_close" and href_stack:
            href, start = href_stack.pop()
            label = "".join(parts[start:])
            if href and href != label and href.removeprefix("mailto:") != label:
                parts.append(f" ({href})")
    return "".join(parts)
