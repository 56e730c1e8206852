"""Helpers for running the portal as it runs in production: gunicorn masters started with
gunicorn.conf.py, `python worker.py` processes, the provider model, and a client that signs in
over HTTP. Every process shares the test's database file and Redis, as machines share Turso and
Redis."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import requests

from devtools.processes import free_port, stop_process, wait_for_port
from devtools.provider_model import ProviderModel
from portal.core.settings import DEV_WEBHOOK_SECRET

ROOT = Path(__file__).resolve().parents[2]


class Deployment:
    """Processes started for one test, with their output in files under the test's tmp_path."""

    def __init__(self, env: dict, logs: Path):
        self.env = env
        self.logs = logs
        self.processes: list[subprocess.Popen] = []
        self.model: ProviderModel | None = None

    def provider(self, **options) -> ProviderModel:
        """The provider model; receipts go to the first web server's /webhooks/resend."""
        self.model = ProviderModel(port=0, webhook_secret=DEV_WEBHOOK_SECRET, **options).start()
        self.env["RESEND_API_URL"] = self.model.url
        return self.model

    def _start(self, name: str, args: list[str], extra: dict) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "ab")
        process = subprocess.Popen(args, env={**self.env, **extra}, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(process)
        return process

    def web(self, name: str = "web", workers: int = 2, **extra) -> str:
        """A gunicorn master with gunicorn.conf.py, as the systemd unit starts it; returns its URL."""
        port = free_port()
        args = [sys.executable, "-m", "gunicorn", "--config", str(ROOT / "gunicorn.conf.py")]
        args += ["--bind", f"127.0.0.1:{port}", "--workers", str(workers)]
        extra = {"PUBLIC_BASE_URL": f"http://127.0.0.1:{port}", **extra}
        process = self._start(name, args, extra)
        wait_for_port(port, timeout=30, process=process)
        return f"http://127.0.0.1:{port}"

    def worker(self, name: str = "worker", burst: bool = False, **extra) -> subprocess.Popen:
        args = [sys.executable, str(ROOT / "worker.py")] + (["--burst"] if burst else [])
        return self._start(name, args, extra)

    def log_text(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def stop(self) -> None:
        for process in reversed(self.processes):
            stop_process(process, timeout=20)
        if self.model is not None:
            self.model.stop()


def signed_in(base_url: str, email: str, password: str) -> requests.Session:
    """A browser-like session signed in over HTTP; its CSRF token is on `session.csrf`."""
    session = requests.Session()
    page = session.get(f"{base_url}/login").text
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    answer = session.post(
        f"{base_url}/login", data={"email": email, "password": password, "csrf_token": token}, allow_redirects=False
    )
    assert answer.status_code == 302, answer.text[:500]
    form = session.get(f"{base_url}/invitations/new").text
    session.csrf = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', form).group(1)
    return session
