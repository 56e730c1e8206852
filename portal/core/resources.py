"""Where the portal's own files stand: `templates/`, `static/`, `migrations/` and `translations/`.

In a checkout they sit at the repository's top level, beside `portal/`; the wheel carries them
inside the package (pyproject.toml's force-include), so an installed portal finds them there.
Each is recognised by a file it must hold, so a stray empty folder is never taken for it.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent


def resource_dir(name: str, holds: str) -> Path:
    """The folder `name` that holds the file `holds`, inside the package or beside it."""
    for candidate in (PACKAGE_DIR / name, PACKAGE_DIR.parent / name):
        if (candidate / holds).is_file():
            return candidate
    raise RuntimeError(f"the portal's {name}/ folder is missing (looked in {PACKAGE_DIR} and beside it)")


TEMPLATES_DIR = resource_dir("templates", "base.html")
STATIC_DIR = resource_dir("static", "portal.css")
MIGRATIONS_DIR = resource_dir("migrations", "0001_companies_and_users.sql")
TRANSLATIONS_DIR = resource_dir("translations", "nb/LC_MESSAGES/messages.po")
