"""`make run`: bring the whole portal up in the foreground, and take it down on Ctrl-C.

Starts, as children of this process: Redis (only when nothing answers at REDIS_URL), the local
provider model (only when RESEND_API_KEY is unset), the web server and the worker. Applies
migrations and seeds the demo company first; once the web server answers, the programme
simulator (devtools/programme_simulator.py) posts the demo employees' attendance to the API.
On Ctrl-C it stops what it started and nothing else.

`make run-cluster` (--cluster) is the shape of a deployment on several machines, on this one: a
libSQL server (sqld, with JWT auth; data under instance/sqld) instead of the local file, Redis,
two web processes on two ports, three workers and the mail viewer.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.processes import free_port, stop_process, wait_for_port  # noqa: E402
from portal.core.settings import ConfigError, Settings  # noqa: E402
from portal.seed import DEMO_EMPLOYEES, DEMO_PASSWORD  # noqa: E402

BIN = Path(sys.executable).parent
children: list[tuple[str, subprocess.Popen]] = []


def start(name: str, args: list[str], env: dict, log_file: Path | None = None) -> subprocess.Popen:
    output = open(log_file, "ab") if log_file else None
    # Each child in a process group of its own: Ctrl-C reaches only this script, which then stops
    # the children in order. (In our group, Redis got the same SIGINT as the worker and went away
    # under it, and the worker printed a page of connection tracebacks.)
    process = subprocess.Popen(args, env=env, cwd=ROOT, stdout=output, stderr=output, process_group=0)
    children.append((name, process))
    return process


def port_holder(host: str, port: int) -> str | None:
    """None when nothing listens on host:port; otherwise what does, in words, as far as we can tell."""
    with socket.socket() as probe:
        probe.settimeout(0.5)
        if probe.connect_ex((host, port)) != 0:
            return None
    try:
        listing = subprocess.run(
            ["ss", "-H", "-ltnp", f"sport = :{port}"], capture_output=True, text=True, timeout=5
        ).stdout
    except (OSError, subprocess.SubprocessError):
        listing = ""
    found = re.search(r'users:\(\("([^"]+)",pid=(\d+)', listing)
    if found:
        return f"{found.group(1)} (pid {found.group(2)})"
    return "a program this user cannot see (another user's, or a container's)"


def stop_all(*_ignored) -> None:
    """Stop in reverse start order, each before the next, so Redis outlives the worker using it."""
    for _name, process in reversed(children):
        stop_process(process, timeout=15)
    children.clear()


def redis_answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def ensure_redis(settings: Settings, env: dict) -> None:
    if redis_answers(settings.redis_url):
        print(f"using the Redis that answers at {settings.redis_url}")
        return
    parsed = urlparse(settings.redis_url)
    if parsed.hostname not in ("127.0.0.1", "localhost"):
        raise SystemExit(f"REDIS_URL {parsed.hostname} does not answer, and only a local Redis can be started")
    if shutil.which("redis-server") is None:
        # Only now: a Redis that already answers (another host, a container) needs no local program.
        subprocess.run(["bash", str(ROOT / "devtools" / "ensure-system-packages.sh"), "redis-server"], check=True)
    data_dir = settings.instance_path / "redis"
    data_dir.mkdir(parents=True, exist_ok=True)
    port = parsed.port or 6379
    print(f"starting redis-server on 127.0.0.1:{port} (log: {data_dir / 'redis.log'})")
    process = start(
        "redis",
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data_dir),
            "--appendonly",
            "yes",
            "--loglevel",
            "warning",
        ],
        env,
        log_file=data_dir / "redis.log",
    )
    wait_for_port(port, process=process)


def fresh_metrics_directory(settings: Settings, env: dict) -> None:
    """The web server's and the worker's metrics files, emptied now, before either starts (their
    counts start from zero with this run), unless PROMETHEUS_MULTIPROC_DIR names one already."""
    if env.get("PROMETHEUS_MULTIPROC_DIR"):
        return
    directory = settings.instance_path / "metrics"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    env["PROMETHEUS_MULTIPROC_DIR"] = str(directory)


def _own_metrics_directory(settings: Settings, name: str) -> str:
    directory = settings.instance_path / f"metrics-{name}"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return str(directory)


def ensure_provider_model(settings: Settings, env: dict) -> None:
    if settings.resend_api_key:
        print("RESEND_API_KEY is set: email goes to the real Resend")
        return
    port = int(env.get("PROVIDER_MODEL_PORT", "8025"))
    try:
        wait_for_port(port, timeout=0.2)
        port = free_port()  # something else holds the usual port; never touch it
    except TimeoutError:
        pass
    webhook_url = f"{settings.public_base_url}/webhooks/resend"
    model_env = {**env, "RESEND_WEBHOOK_SECRET": settings.resend_webhook_secret}
    process = start(
        "provider model",
        [
            str(BIN / "python"),
            "-m",
            "devtools.provider_model",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webhook-url",
            webhook_url,
            # The viewer keeps its mail under instance/, so links sent before a restart still open.
            "--mailbox",
            str(settings.instance_path / "mailbox.json"),
            # Resend's limit (5/s by default), the one the workers' shared limiter is sized by: the
            # demo meets the provider's 429s and rate-limit headers as production would.
            "--rate-limit",
            str(settings.resend_rate_limit_per_second),
        ],
        model_env,
    )
    wait_for_port(port, process=process)
    env["RESEND_API_URL"] = f"http://127.0.0.1:{port}"


def start_sqld(settings: Settings, env: dict) -> str:
    """A libSQL server for the cluster, its data kept under instance/sqld between runs; returns
    the DATABASE_URL every process uses."""
    from devtools.sqld import JwtKeys, SqldServer, install

    install()
    home = settings.instance_path / "sqld"
    (home / "keys").mkdir(parents=True, exist_ok=True)
    server = SqldServer(home / "data", JwtKeys(home / "keys")).start()  # a new key pair each run
    children.append(("sqld", server.process))
    print(f"started sqld on {server.http_url} (data: {home / 'data'}, log: {server.log})")
    env["DATABASE_URL"] = server.database_url()
    return server.http_url


# Each demo person as the portal and the README ("First five minutes") call them: by what they do,
# not by the stored role code (an `employee` account is a volunteer: the seed gives Olena sessions).
ROLE_WORDS = {"admin": "TEEI admin", "manager": "Company manager", "employee": "Volunteer"}
SEEDED_LOGIN = re.compile(r"^\s*(admin|manager|employee)\s+(\S+)\s+password: (\S+)\s*$", re.MULTILINE)


def start_banner(settings: Settings, env: dict, seed_output: str, cluster: dict | None = None) -> str:
    """What a person needs first: where the portal and its mail viewer are, and who to sign in as:
    the logins `flask demo seed` printed, and a volunteer's."""
    lines = [f"  Partner portal: {settings.public_base_url}"]
    if cluster:
        lines += [f"  {name + ':':<15} {where}" for name, where in cluster.items()]
    if env.get("RESEND_API_URL", "").startswith("http://127.0.0.1"):
        lines.append(f"  Mail viewer:    {env['RESEND_API_URL']}/  (every email lands here: invitations, reset links)")
    logins = SEEDED_LOGIN.findall(seed_output) + [("employee", DEMO_EMPLOYEES[0][0], DEMO_PASSWORD)]
    lines.append("  Demo logins:")
    lines += [f"    {ROLE_WORDS[role] + ':':<17} {email:<27} password: {password}" for role, email, password in logins]
    lines.append('  What to click first as each person: README.md, "First five minutes".')
    return "\n".join(lines)


def main() -> int:
    cluster = "--cluster" in sys.argv[1:]
    env = dict(os.environ)
    try:
        settings = Settings.from_env(env)
    except ConfigError as error:
        print(error.code, file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: (stop_all(), sys.exit(0)))
    # A shell that starts us in the background leaves SIGINT ignored; Ctrl-C must always stop us.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # Before anything starts: a second `make run` must not announce itself and then die.
    bind = urlparse(settings.public_base_url)
    holder = port_holder(bind.hostname, bind.port or 80)
    if holder:
        print(
            f"{bind.hostname}:{bind.port or 80} (PUBLIC_BASE_URL) is already taken by {holder}; "
            "stop it (an earlier `make run`?) or set PUBLIC_BASE_URL to another port",
            file=sys.stderr,
        )
        return 1
    # Everything make run writes under instance/ (database, Redis data, mailbox, logs) holds
    # addresses or secrets: readable by this user only.
    os.umask(0o077)
    fresh_metrics_directory(settings, env)
    try:
        shape = {}
        if cluster:
            shape["Database"] = f"{start_sqld(settings, env)} (sqld, a libSQL server; JWT auth)"
        ensure_redis(settings, env)
        flask = [str(BIN / "flask"), "--app", "portal"]
        subprocess.run(flask + ["db", "upgrade"], env=env, cwd=ROOT, check=True)
        seed = subprocess.run(
            flask + ["demo", "seed", "--without-attendance"],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        ensure_provider_model(settings, env)
        web = start(
            "web",
            [
                str(BIN / "gunicorn"),
                # The production configuration (access log without secrets, metrics hooks).
                "--config",
                str(ROOT / "gunicorn.conf.py"),
                "--bind",
                f"{bind.hostname}:{bind.port or 80}",
            ],
            env,
        )
        if cluster:
            # A second web host behind the same database and Redis, as a load balancer would use.
            second = free_port()
            start(
                "web 2",
                [
                    str(BIN / "gunicorn"),
                    "--config",
                    str(ROOT / "gunicorn.conf.py"),
                    "--bind",
                    f"{bind.hostname}:{second}",
                ],
                {**env, "PROMETHEUS_MULTIPROC_DIR": _own_metrics_directory(settings, "web-2")},
            )
            shape["Web 2"] = f"http://{bind.hostname}:{second} (the same portal, a second web process)"
            shape["Workers"] = "3 worker.py processes sharing one Redis queue and the provider's rate limit"
            shape["Redis"] = settings.redis_url
        for _ in range(3 if cluster else 1):
            start("worker", [str(BIN / "python"), "worker.py"], env)
        wait_for_port(bind.port or 80, timeout=30, process=web)
        if web.poll() is not None:  # what answered was not our web server
            print("the web server stopped at start-up; see its output above", file=sys.stderr)
            return 1
        # The demo's attendance arrives as the platforms' does: signed, through POST /api/attendance.
        simulator = subprocess.run(
            [str(BIN / "python"), "devtools/programme_simulator.py"], env=env, cwd=ROOT, capture_output=True, text=True
        )
        print()
        print(start_banner(settings, env, seed.stdout, shape))
        print("  " + (simulator.stdout + simulator.stderr).strip().replace("\n", "\n  "))
        print("  Ctrl-C stops everything started here.\n")
        while all(process.poll() is None for _, process in children):
            time.sleep(0.5)
        stopped = [name for name, process in children if process.poll() is not None]
        print(f"stopped unexpectedly: {', '.join(stopped)}; shutting down", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nstopping…")
        return 0
    finally:
        stop_all()


if __name__ == "__main__":
    sys.exit(main())
