"""One way to page a list that grows: a page number from the query string, and what the page
says about itself ("Showing 51–100 of 312", worded in the page's language by templates/_pager.html)
instead of silently stopping at a limit."""

from __future__ import annotations

from dataclasses import dataclass, field

PER_PAGE = 50


def page_number(value: str | None) -> int:
    """The page asked for in the query string; anything that is not a positive number is page 1."""
    try:
        number = int(value or 1)
    except ValueError:
        return 1
    return max(1, min(number, 100_000))


def search_text(value: str | None) -> str:
    """The search box's text from the query string, trimmed to the longest address a list holds."""
    return (value or "").strip()[:254]


@dataclass(frozen=True)
class Page:
    items: list = field(default_factory=list)
    total: int = 0  # every row that matches the filters
    number: int = 1
    per_page: int = PER_PAGE

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.per_page

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.pages

    @property
    def first(self) -> int:
        """The position of the page's first item in the whole list (0 for an empty page)."""
        return self.offset + 1 if self.items else 0

    @property
    def last(self) -> int:
        return self.offset + len(self.items)

    @property
    def shows_all(self) -> bool:
        return bool(self.items) and self.first == 1 and self.last == self.total


def limits(number: int, per_page: int = PER_PAGE) -> dict:
    """The LIMIT and OFFSET parameters of the page's query."""
    return {"limit": per_page, "offset": (number - 1) * per_page}


def like_pattern(query: str) -> str:
    """A LIKE pattern (ESCAPE '\\') that finds the typed text anywhere, with %, _ and \\ taken literally."""
    escaped = query.strip().lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
