"""Test-only helpers shared by tests, e2e and benchmarks: a private Redis, and a Redis dump.

Nothing here is used by the running portal; it lives in the package so `bench/` and `e2e/`
can import it without path tricks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import redis

from devtools.processes import free_port, stop_process, wait_for_port


class PrivateRedis:
    """A throwaway redis-server on a free loopback port, with no persistence."""

    def __init__(self):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._dir = tempfile.mkdtemp(prefix="portal-redis-")
        self.process: subprocess.Popen | None = None

    def start(self) -> PrivateRedis:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed; `make test` installs it")
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self._dir,
                "--daemonize",
                "no",
                "--loglevel",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, process=self.process)
        return self

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)

    def halt(self) -> None:
        """An outage: the server stops, keeping its port, and start() brings it back (empty)."""
        if self.process:
            stop_process(self.process)
            self.process = None

    def stop(self) -> None:
        self.halt()
        shutil.rmtree(self._dir, ignore_errors=True)


def redis_dump(redis) -> str:
    """Every key and value in Redis as text, to search for things that must not be there."""
    parts = []
    for key in redis.scan_iter("*"):
        parts.append(key.decode(errors="replace"))
        kind = redis.type(key).decode()
        if kind == "string":
            parts.append(redis.get(key).decode(errors="replace"))
        elif kind == "hash":
            for field, value in redis.hgetall(key).items():
                if field == b"data":  # RQ stores job payloads zlib-compressed
                    value = zlib.decompress(value)
                parts.append(f"{field.decode()}={value.decode(errors='replace')}")
        elif kind == "list":
            parts.extend(v.decode(errors="replace") for v in redis.lrange(key, 0, -1))
        elif kind == "set":
            parts.extend(v.decode(errors="replace") for v in redis.smembers(key))
        elif kind == "zset":
            parts.extend(v.decode(errors="replace") for v, _ in redis.zrange(key, 0, -1, withscores=True))
        elif kind == "stream":
            parts.extend(
                json.dumps({k.decode(): v.decode() for k, v in fields.items()}) for _, fields in redis.xrange(key)
            )
    return "\n".join(parts)


def wait_until(condition, timeout: float = 60.0, interval: float = 0.1) -> bool:
    """Poll `condition` until it is true or `timeout` seconds pass; its last answer.

    For tests that wait on other processes (workers, servers): a ceiling, never a speed assertion."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


def process_env(settings, instance_path, **overrides: str) -> dict[str, str]:
    """The environment a portal process (worker.py, gunicorn) started by a test or a benchmark gets:
    the same database, Redis, secret and provider as `settings`, its own instance folder, and
    `overrides` (variable name -> value) on top. Nothing else leaks in from the caller's environment."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "SECRET_KEY": settings.secret_key,
        "PORTAL_INSTANCE_PATH": str(instance_path),
    }
    if settings.resend_api_url:
        env["RESEND_API_URL"] = settings.resend_api_url
    return {**env, **overrides}


def start_workers(env: dict[str, str], count: int) -> list[subprocess.Popen]:
    """`count` real `python worker.py` processes from the repository root, with `env` (process_env),
    their output discarded; the caller stops each (stop_process) when done."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [
        subprocess.Popen(
            [sys.executable, "worker.py"], env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for _ in range(count)
    ]
