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
    """Every login it prints signs in (the seed's own output plus the volunteer it adds)."""
    import re

    from portal.seed import seed_demo

    seeded = seed_demo(db, secret_key=settings.secret_key, attendance=False)
    seed_output = "demo company ready; sign in with:\n" + "\n".join(
        f"  {role:8} {email}  password: {password}" for email, role, password in seeded
    )
    banner = run_portal.start_banner(settings, {"RESEND_API_URL": "http://127.0.0.1:8025"}, seed_output)
    assert "Mail viewer:    http://127.0.0.1:8025/" in banner and "invitations, reset links" in banner
    logins = re.findall(r"^\s+(admin|manager|employee)\s+(\S+)\s+password: (\S+)", banner, re.MULTILINE)
    assert [role for role, _, _ in logins] == ["admin", "manager", "employee"]
    for _role, email, password in logins:
        assert auth.login(email, password).status_code == 302, email
        auth.logout()
    assert "Mail viewer" not in run_portal.start_banner(settings, {}, seed_output)
