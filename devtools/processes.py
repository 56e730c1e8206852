"""Starting and stopping local processes on free loopback ports: used by `make run`, tests and benchmarks."""

from __future__ import annotations

import os
import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 15.0, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listened on port {port} within {timeout}s")


def stop_process(process: subprocess.Popen, timeout: float = 10.0) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def process_cpu_seconds(pid: int, *, waited_children: bool = False) -> float:
    """User and system CPU of a running process (Linux /proc), with `waited_children` also that of
    the children it has waited for (a forking worker's finished horses)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = fields[11:15] if waited_children else fields[11:13]
    return sum(int(value) for value in ticks) / os.sysconf("SC_CLK_TCK")
