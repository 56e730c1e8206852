"""`pip install .` into a fresh virtual environment outside the checkout carries what the portal
needs to run (templates, static files, migrations, which stand at the top level of the
repository), and not the development tools: installed, migrated and asked for a page."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PAGE_CHECK = """
from portal import create_app
app = create_app({"TESTING": True})
client = app.test_client()
login = client.get("/login")
css = client.get("/static/portal.css")
norwegian = client.get("/login", headers={"Accept-Language": "nb"}).get_data(as_text=True)
print(login.status_code, "Sign in" in login.get_data(as_text=True), css.status_code, "Logg inn" in norwegian)
"""


def run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, timeout=240, **kwargs)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def fresh_venv(path: Path) -> Path:
    """A new virtual environment whose only extra is a path to this one's installed packages, so
    the portal's dependencies (and the build backend) need no download."""
    run([sys.executable, "-m", "venv", path])
    python = path / "bin" / "python"
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    (site / "dependencies-from-the-test-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_pip_install_into_a_fresh_venv_runs_outside_the_checkout(tmp_path, redis_server):
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    for folder in ("portal", "templates", "static", "migrations", "translations"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    python = fresh_venv(tmp_path / "venv")
    run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q", source])

    installed = Path(run([python, "-c", "import portal; print(portal.__file__)"], cwd=tmp_path).strip()).parent
    assert installed.is_relative_to(tmp_path / "venv"), "the installed copy, not the checkout, is what Python finds"
    assert (installed / "templates" / "base.html").is_file()
    assert (installed / "templates" / "report_emails" / "subscription.html").is_file()
    assert (installed / "static" / "portal.css").is_file()
    assert (installed / "translations" / "nb" / "LC_MESSAGES" / "messages.mo").is_file()
    assert sorted(p.name for p in (installed / "migrations").glob("*.sql")) == sorted(
        p.name for p in (ROOT / "migrations").glob("*.sql")
    )
    assert not (installed.parent / "devtools").exists()

    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SECRET_KEY": "wheel-test",
        "REDIS_URL": redis_server.url,
    }
    upgraded = run([python, "-m", "flask", "--app", "portal", "db", "upgrade"], env=env, cwd=workdir)
    assert "applied 0001_" in upgraded
    assert (workdir / "instance" / "portal.db").exists()
    assert run([python, "-c", PAGE_CHECK], env=env, cwd=workdir).split() == ["200", "True", "200", "True"]
