"""The wheel carries what the portal needs to run (templates, static files, migrations, which stand
at the top level of the repository), and not the development tools: built, installed outside the checkout, migrated and asked for a page."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PAGE_CHECK = """
from portal import create_app
app = create_app({"TESTING": True})
client = app.test_client()
login = client.get("/login")
css = client.get("/static/portal.css")
print(login.status_code, "Sign in" in login.get_data(as_text=True), css.status_code)
"""


def run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, timeout=240, **kwargs)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_wheel_runs_outside_the_checkout(tmp_path, redis_server):
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    for folder in ("portal", "templates", "static", "migrations"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            tmp_path / "dist",
            source,
        ]
    )
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "portal/templates/base.html" in names and "portal/static/portal.css" in names
    assert any(name.startswith("portal/migrations/") and name.endswith(".sql") for name in names)
    assert not any(name.startswith("devtools/") for name in names)

    site = tmp_path / "site"
    run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", site, wheel])
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(site),
        "SECRET_KEY": "wheel-test",
        "REDIS_URL": redis_server.url,
    }
    # The installed copy, not the checkout, is what Python finds.
    assert run([sys.executable, "-c", "import portal; print(portal.__file__)"], env=env, cwd=workdir).startswith(
        str(site)
    )
    upgraded = run([sys.executable, "-m", "flask", "--app", "portal", "db", "upgrade"], env=env, cwd=workdir)
    assert "applied 0001_" in upgraded
    assert (workdir / "instance" / "portal.db").exists()
    assert run([sys.executable, "-c", PAGE_CHECK], env=env, cwd=workdir).split() == ["200", "True", "200"]
