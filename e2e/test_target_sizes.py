"""Every link, button and field is a target of at least 24 by 24 CSS pixels, on every page of every
role, at 1280 and 390 px (issue 47, item 10; WCAG 2.2's 2.5.8 "Target Size (Minimum)").

The exception WCAG makes for a link in running text (its size is set by the line of text around it)
is the one taken: a link whose block holds other words than its own. Anything else smaller than
24 px fails, the browser's own checkboxes included (the portal's are made bigger)."""

from __future__ import annotations

from e2e.test_phone_widths import fill_the_portal, walk_every_role

MINIMUM = 24
SMALL_TARGETS = """(minimum) => {
  const found = [];
  const inRunningText = (el) => {
    if (el.tagName !== 'A' || getComputedStyle(el).display !== 'inline') return false;
    let block = el.parentElement;
    while (block && getComputedStyle(block).display.startsWith('inline')) block = block.parentElement;
    const own = el.textContent.replace(/\\s+/g, ' ').trim();
    const around = (block ? block.textContent : '').replace(/\\s+/g, ' ').trim();
    return around.length > own.length;
  };
  const targets = document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary');
  for (const el of targets) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;  // not shown at this width
    if (el.closest('.visually-hidden') || box.right < 0) continue;  // shown only on focus (the skip link)
    if (getComputedStyle(el).visibility === 'hidden') continue;
    if (box.width >= minimum - 0.5 && box.height >= minimum - 0.5) continue;
    if (inRunningText(el)) continue;
    const name = (el.textContent || el.value || el.name || el.id || '').replace(/\\s+/g, ' ').trim().slice(0, 40);
    found.push(`${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''} "${name}" is ${Math.round(box.width)}x${Math.round(box.height)}`);
  }
  return found;
}"""


def small_targets(page, path) -> list[str]:
    found = []
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        found += [f"{width} px: {target}" for target in page.evaluate(SMALL_TARGETS, MINIMUM)]
    return sorted(set(found))


def test_every_target_on_every_page_is_at_least_24_px_at_1280_and_390(stack, browser, new_context):
    failures = walk_every_role(stack, browser, fill_the_portal(stack, new_context), check=small_targets, look_at=())
    assert not failures, "targets smaller than 24x24 px:\n" + "\n".join(f"{k}: {v}" for k, v in failures.items())
