"""A longer language cuts off no text at 390 px (issue 47, item 10).

The portal runs with its English pseudo-translated (devtools/pseudo.py: every message accented and
40% longer), and each role walks every page it can reach at 390 px. A page fails when it scrolls
sideways, when a table is wider than its box, or when an element's own text is wider than the
element (scrollWidth > clientWidth: cut off, or spilling over its neighbours)."""

from __future__ import annotations

import pytest

from e2e.conftest import running_stack
from e2e.screenshots import ARTIFACTS, shoot
from e2e.test_phone_widths import PHONE, overflow, sign_in, walk_every_role
from portal.seed import seed_demo

SHOTS = ARTIFACTS / "pseudo-translation"
CLIPPED = """() => {
  const found = [];
  for (const el of document.querySelectorAll('body *')) {
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.display === 'inline' || style.display === 'contents') continue;
    if (['OPTION', 'SCRIPT', 'STYLE', 'svg', 'TEXTAREA', 'INPUT', 'SELECT'].includes(el.tagName)) continue;
    if (el.closest('.visually-hidden, svg')) continue;  // for screen readers: 1 px on purpose
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.right < 0) continue;
    const ownText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!ownText) continue;
    if (el.scrollWidth > el.clientWidth + 1) {
      found.push(`${el.tagName.toLowerCase()}${el.className ? '.' + String(el.className).split(' ')[0] : ''} "${el.textContent.trim().slice(0, 40)}" needs ${el.scrollWidth} px in ${el.clientWidth}`);
    }
  }
  return found;
}"""


@pytest.fixture
def pseudo_stack(portal_env, tmp_path):
    with running_stack(portal_env, tmp_path / "logs", app="devtools.pseudo:create_pseudo_app()") as running:
        yield running


def clipped(page, path) -> list[str]:
    return overflow(page, path) + page.evaluate(CLIPPED)


def test_no_text_is_cut_off_at_390_px_when_every_message_is_40_percent_longer(pseudo_stack, browser):
    seed_demo(pseudo_stack.db, secret_key=pseudo_stack.secret_key, history=True)  # full tables
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(90_000)
    page = context.new_page()
    sign_in(page, pseudo_stack.url, "manager@northwind.example")
    assert "ŀ" in page.title(), f"not pseudo-translated: {page.title()}"
    shoot(page, SHOTS, "report")
    page.goto(f"{pseudo_stack.url}/reports/settings")
    page.locator("#currency").fill("kr")
    page.locator("main form button[type=submit]").first.click()
    shoot(page, SHOTS, "report-settings-refused")
    context.close()
    failures = walk_every_role(pseudo_stack, browser, None, check=clipped, look_at=())
    assert not failures, "text cut off at 390 px:\n" + "\n".join(f"{k}: {v}" for k, v in failures.items())
