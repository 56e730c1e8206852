"""Screenshots of a page at the widths every changed page is looked at."""

from __future__ import annotations

from pathlib import Path

WIDTHS = (1280, 390)
# Where every browser test keeps its screenshots: in the checkout, ignored by git, removed by `make clean`.
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


def shoot(page, directory: Path, name: str) -> None:
    """Full-page PNGs `<name>-<width>.png` in `directory`; the viewport is put back afterwards."""
    directory.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(directory / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1100, "height": 800})
