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
