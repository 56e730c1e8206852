"""A real OpenID Connect provider for tests and `make run`: oidc-provider-mock, as its own process
on a free loopback port. Its issuer is its own address; any client ID is accepted, and a person
signs in by a subject typed (or posted) on its authorization page, with the claims a test gave it."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import urljoin

import requests

from devtools.processes import free_port, stop_process, wait_for_port


class OidcProvider:
    """oidc-provider-mock on a free port: start(), stop(), and what a person does on its pages."""

    def __init__(self, port: int | None = None, token_max_age_seconds: int = 3600):
        self.port = port or free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.token_max_age_seconds = token_max_age_seconds
        self.process: subprocess.Popen | None = None

    def start(self) -> OidcProvider:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "oidc_provider_mock", "--port", str(self.port), "--host", "127.0.0.1"]
            + ["--require-nonce", "true", "--token-max-age", str(self.token_max_age_seconds)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
        )
        wait_for_port(self.port, timeout=30, process=self.process)
        return self

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def set_user(self, subject: str, **claims) -> None:
        """The person `subject` at the provider, with these claims in their ID token (email, name, ...)."""
        requests.put(f"{self.issuer}/users/{subject}", json=claims, timeout=10).raise_for_status()

    def answer(self, authorization_url: str, subject: str | None = None) -> str:
        """A person at the provider's page: signs in as `subject`, or denies when None. Returns where the
        provider sends the browser back (the portal's callback with a code or an error, and the state)."""
        data = {"sub": subject} if subject is not None else {"action": "deny"}
        reply = requests.post(authorization_url, data=data, allow_redirects=False, timeout=10)
        if reply.status_code not in (302, 303):
            raise AssertionError(f"the provider answered {reply.status_code}: {reply.text[:300]}")
        return urljoin(authorization_url, reply.headers["Location"])
