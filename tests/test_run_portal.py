"""`make run` as a newcomer meets it (issue 14): a taken port is named, Ctrl-C reaches only run_portal."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from devtools import run_portal
from devtools.processes import free_port

ROOT = Path(__file__).resolve().parents[1]


def test_a_free_port_has_no_holder():
    assert run_portal.port_holder("127.0.0.1", free_port()) is None


def test_a_taken_port_names_the_program_that_holds_it():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        holder = run_portal.port_holder("127.0.0.1", listener.getsockname()[1])
    assert holder is not None and f"pid {os.getpid()}" in holder


def test_children_run_in_process_groups_of_their_own(tmp_path):
    child = run_portal.start("sleeper", [sys.executable, "-c", "import time; time.sleep(30)"], dict(os.environ))
    try:
        # Ctrl-C signals the terminal's foreground group: this one, not the child's.
        assert os.getpgid(child.pid) == child.pid != os.getpgid(0)
    finally:
        run_portal.stop_all()
    assert child.poll() is not None and run_portal.children == []


def test_make_run_installs_no_redis_before_asking_whether_one_answers():
    """CONTRACT.md: Redis is installed only if none answers on REDIS_URL (a container, another host)."""
    recipe = subprocess.run(["make", "-n", "run"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "redis-server" not in recipe and "run_portal.py" in recipe


def test_the_start_banner_names_the_mail_viewer_and_a_login_for_each_person(settings, db, client, auth):
    """Every login it prints signs in (the seed's own output plus the volunteer it adds), and each
    person is called what the README calls them, which is what their account is in the database."""
    import re

    import sqlalchemy as sa

    from portal.seed import seed_demo

    seeded = seed_demo(db, secret_key=settings.secret_key, attendance=False)
    seed_output = "demo company ready; sign in with:\n" + "\n".join(
        f"  {role:8} {email}  password: {password}" for email, role, password in seeded
    )
    banner = run_portal.start_banner(settings, {"RESEND_API_URL": "http://127.0.0.1:8025"}, seed_output)
    assert "Mail viewer:    http://127.0.0.1:8025/" in banner and "invitations, reset links" in banner
    logins = re.findall(r"^\s+([A-Za-z ]+):\s+(\S+@\S+)\s+password: (\S+)$", banner, re.MULTILINE)
    readme = (ROOT / "README.md").read_text()
    called = dict((email, who) for who, email in re.findall(r"^\| ([^|]+?) \| `([^`]+@[^`]+)` \|", readme, re.M))
    stored = {"TEEI admin": "admin", "Company manager": "manager", "Volunteer": "employee"}
    assert [email for _, email, _ in logins] == [
        "admin@teei.example",
        "manager@northwind.example",
        "olena@northwind.example",
    ]
    for word, email, password in logins:
        assert word == called[email], f"the README calls {email} {called[email]!r}, the banner {word!r}"
        with db.read() as conn:
            role = conn.execute(sa.text("SELECT role FROM users WHERE email = :e"), {"e": email}).scalar_one()
        assert stored[word] == role, f"{email} is an {role} account, not a {word}"
        assert auth.login(email, password).status_code == 302, email
        auth.logout()
    assert "Mail viewer" not in run_portal.start_banner(settings, {}, seed_output)


def test_make_run_installs_the_portal_without_the_test_tools_and_make_test_installs_them(tmp_path):
    """A fresh clone: `make run` installs the project's runtime dependencies only; `make test` (which
    .ci/run calls) installs the `test` extra as well."""
    venv = tmp_path / "venv"
    recipe = {
        goal: subprocess.run(
            ["make", "-n", goal, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        for goal in ("run", "test")
    }
    assert f"{venv}/bin/pip install --quiet -e .\n" in recipe["run"] and "[test]" not in recipe["run"]
    assert f"{venv}/bin/pip install --quiet -e '.[test]'" in recipe["test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()


RUNTIME_IMPORTS = """
import importlib, importlib.abc, importlib.metadata as md, pkgutil, re, sys, tomllib

def key(name):
    return re.sub(r"[-_.]+", "-", name).lower()

def requirement_names(requirements):
    return {key(re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", r).group(0)) for r in requirements or () if "extra ==" not in r}

# What `pip install -e .` installs: the project's dependencies and theirs, without any extra.
with open("{root}/pyproject.toml", "rb") as project:
    wanted, closure = requirement_names(tomllib.load(project)["project"]["dependencies"]), set()
while wanted:
    name = wanted.pop()
    if name in closure:
        continue
    closure.add(name)
    try:
        wanted |= requirement_names(md.requires(name))
    except md.PackageNotFoundError:
        pass
blocked = {m for m, dists in md.packages_distributions().items() if not {key(d) for d in dists} & closure}
print("blocked:", " ".join(sorted(blocked)), file=sys.stderr)

class OnlyRuntime(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(f"{name} is not a runtime dependency (pyproject.toml)")
        return None

sys.meta_path.insert(0, OnlyRuntime())
import portal, devtools
modules = ["worker", "devtools.run_portal", "devtools.provider_model.__main__", "devtools.programme_simulator",
           "devtools.sqld", "devtools.schema_file"]
modules += [m.name for m in pkgutil.walk_packages(portal.__path__, "portal.")]
for name in modules:
    importlib.import_module(name)
from portal import create_app
create_app({"TESTING": True})
import pathlib
from devtools.sqld import JwtKeys
JwtKeys(pathlib.Path(".")).token()  # `make run-cluster` signs sqld's tokens
print(len(modules))
"""


def test_what_make_run_starts_imports_only_the_runtime_dependencies(tmp_path):
    """Every module of the portal, the worker and what `make run` starts (the provider model, the
    programme simulator, sqld for `make run-cluster`) imports with the test tools out of reach."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SECRET_KEY": "runtime-only", "PORTAL_INSTANCE": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", RUNTIME_IMPORTS.replace("{root}", str(ROOT))],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    blocked = result.stderr.split("blocked:", 1)[1].split("\n", 1)[0].split()
    assert {"pytest", "playwright", "hypothesis", "pypdf"} <= set(blocked), "the test tools are out of reach"
    assert int(result.stdout.split()[-1]) > 100
