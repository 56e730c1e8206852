"""Where the portal's own files stand: `templates/`, `static/` and `migrations/`.

In a checkout they sit at the repository's top level, beside `portal/`; the wheel carries them
inside the package (pyproject.toml's force-include), so an installed portal finds them there.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent


def resource_dir(name: str) -> Path:
    inside = PACKAGE_DIR / name
    return inside if inside.is_dir() else PACKAGE_DIR.parent / name


TEMPLATES_DIR = resource_dir("templates")
STATIC_DIR = resource_dir("static")
MIGRATIONS_DIR = resource_dir("migrations")
