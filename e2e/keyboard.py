"""A person who uses only the keyboard: Tab to a control by its name, type, press Enter.

Every stop on the way must show where the focus is; a control that Tab cannot reach within
MAX_TABS presses fails the test, as does a page whose Tab order never leaves it (a trap).
"""

from __future__ import annotations

import re

MAX_TABS = 60
# How long a read of the focus waits for it to settle: 20 reads 50 ms apart.
SETTLE_READS = 20
SETTLE_PAUSE_MS = 50

# What a person sees of the focused element: its name, and whether the focus is drawn.
_FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  const rect = el.getBoundingClientRect();
  const label = el.labels && el.labels.length ? el.labels[0].innerText
              : el.getAttribute('aria-label') || el.innerText || el.value || '';
  return {
    tag: el.tagName.toLowerCase(), id: el.id, name: label.replace(/\\s+/g, ' ').trim(),
    outlined: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0,
    shadowed: style.boxShadow !== 'none',
    onScreen: rect.width > 0 && rect.height > 0 && rect.right > 0 && rect.left < innerWidth,
  };
}"""


class KeyboardUser:
    def __init__(self, page):
        self.page = page

    def focused(self) -> dict | None:
        # A sandboxed frame lives in a process of its own, so the focus reaches it a moment after
        # the key: until then the page reports no focus, or the frame with nothing focused in it.
        # Read again for a while before concluding the focus has left the page.
        for _ in range(SETTLE_READS):
            focused = self._read_focus()
            if focused is not None and focused["tag"] != "iframe":
                return focused
            self.page.wait_for_timeout(SETTLE_PAUSE_MS)
        return focused

    def _read_focus(self) -> dict | None:
        focused = self.page.evaluate(_FOCUSED)
        if focused is not None and focused["tag"] == "iframe":
            # The page's own styles cannot mark a frame whose content has the focus (Chromium matches
            # no :focus on it): what a person sees is the focus drawn inside the frame.
            frame = self.page.evaluate_handle("document.activeElement").as_element().content_frame()
            inside = frame.evaluate(_FOCUSED) if frame is not None else None
            return {**inside, "frame": True} if inside is not None else focused
        return focused

    def tab(self, key: str = "Tab") -> dict | None:
        self.page.keyboard.press(key)
        focused = self.focused()
        if focused is not None:
            assert focused["outlined"] or focused["shadowed"], f"no visible focus on {focused}"
            assert focused["onScreen"], f"the focus is off screen: {focused}"
        return focused

    def tab_to(self, name: str | re.Pattern, most: int = MAX_TABS) -> dict:
        """Press Tab until the focused control's name is `name` (or matches the pattern), at most
        `most` times."""
        seen = []
        for _ in range(most):
            focused = self.tab()
            if focused is None:
                continue
            matches = name.search(focused["name"]) if isinstance(name, re.Pattern) else focused["name"] == name
            if matches:
                return focused
            seen.append(focused["name"])
        raise AssertionError(f"Tab never reached {name!r}; it went through {seen}")

    def fill(self, label: str | re.Pattern, text: str) -> None:
        self.tab_to(label)
        self.page.keyboard.type(text)

    def activate(self, name: str | re.Pattern) -> None:
        """Tab to a link or button and press Enter, then wait for the page it leads to."""
        self.tab_to(name)
        with self.page.expect_navigation():
            self.page.keyboard.press("Enter")

    def skip_to_content(self) -> None:
        """The first Tab on a page shows the skip link; Enter puts the focus on the main content."""
        first = self.tab()
        assert first is not None and first["name"] == "Skip to content", first
        self.page.keyboard.press("Enter")
        assert self.page.evaluate("document.activeElement.id") == "main"

    def assert_no_trap(self) -> list[dict]:
        """From the top, Tab goes through the page and out of it (back to the first stop); the stops
        on the way, each with its focus shown."""
        self.page.evaluate("document.activeElement && document.activeElement.blur()")
        first = self.tab()
        stops = [first]
        for _ in range(MAX_TABS * 2):
            focused = self.tab()
            if focused is None or focused == first:
                return stops
            stops.append(focused)
        raise AssertionError("Tab never left the page: a keyboard trap")
