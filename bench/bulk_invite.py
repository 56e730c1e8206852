"""Benchmark: one POST of 500 invitation addresses through the running app (gunicorn).

Prints the p50 of 5 runs, and in the same run the p50 of the bare work underneath it: inserting
500 outbox rows in one transaction plus one pipelined publish of 500 envelopes. Then the ratio.
Target: p50 under 1 s, ratio under 2. Loopback only; everything it starts is stopped.
Run: .venv/bin/python bench/bulk_invite.py [--runs 5] [--addresses 500]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import requests
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.processes import free_port, stop_process, wait_for_port  # noqa: E402
from devtools.testing import PrivateRedis  # noqa: E402
from portal.core import schema  # noqa: E402
from portal.core.db import Database  # noqa: E402
from portal.outbox.ground.queues import email_queue  # noqa: E402
from portal.outbox.write.publish import enqueue_envelopes  # noqa: E402
from portal.seed import DEMO_PASSWORD, seed_demo  # noqa: E402


def csrf_token(html: str) -> str:
    return re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html).group(1)


def time_app_post(url: str, runs: int, count: int) -> list[float]:
    session = requests.Session()
    page = session.get(f"{url}/login", timeout=10).text
    session.post(
        f"{url}/login",
        data={"email": "manager@northwind.example", "password": DEMO_PASSWORD, "csrf_token": csrf_token(page)},
        timeout=10,
    )
    timings = []
    for run in range(runs):
        addresses = "\n".join(f"colleague{run}-{n}@bench.example" for n in range(count))
        token = csrf_token(session.get(f"{url}/invitations/new", timeout=10).text)
        started = time.perf_counter()
        response = session.post(
            f"{url}/invitations/new",
            data={"emails": addresses, "programme": "language", "csrf_token": token},
            timeout=60,
            allow_redirects=False,
        )
        timings.append(time.perf_counter() - started)
        if response.status_code != 302:
            raise SystemExit(f"the invite POST answered {response.status_code}, not a redirect")
    return timings


def time_bare_work(db: Database, redis, runs: int, count: int) -> list[float]:
    queue = email_queue(redis)
    timings = []
    for _ in range(runs):
        rows = [
            {"id": f"ntc_{uuid.uuid4().hex}", "key": uuid.uuid4().hex, "r": f"{uuid.uuid4().hex}@bench.example"}
            for _ in range(count)
        ]
        started = time.perf_counter()
        with db.write() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO email_outbox (id, family, recipient, idempotency_key, template, template_version, "
                    "layout_version, template_input, environment, created_at, updated_at) VALUES "
                    "(:id, 'notice', :r, :key, 'notice', 1, 1, '{}', 'development', 'now', 'now')"
                ),
                rows,
            )
        enqueue_envelopes(queue, [row["id"] for row in rows])
        timings.append(time.perf_counter() - started)
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--addresses", type=int, default=500)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-invite-"))
    database_url = f"sqlite+libsql:///{workdir / 'portal.db'}"
    db = Database(database_url)
    schema.upgrade(db)
    seed_demo(db, secret_key="bench")  # the portal started below runs with the same SECRET_KEY
    redis_server = PrivateRedis().start()
    port = free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_server.url,
        "SECRET_KEY": "bench",
        "PORTAL_INSTANCE_PATH": str(workdir / "instance"),
        "PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--workers",
            "2",
            "--bind",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
            "portal:create_app()",
        ],
        env=env,
        cwd=ROOT,
    )
    try:
        wait_for_port(port, timeout=30, process=server)
        print(f"POSTing {args.addresses} addresses {args.runs} times through gunicorn (2 workers)…")
        app_times = time_app_post(f"http://127.0.0.1:{port}", args.runs, args.addresses)
        print("timing the bare insert + pipelined publish…")
        bare_times = time_bare_work(db, redis_server.client(), args.runs, args.addresses)
    finally:
        stop_process(server)
        redis_server.stop()
        db.dispose()
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)

    app_p50, bare_p50 = statistics.median(app_times), statistics.median(bare_times)
    ratio = app_p50 / bare_p50
    print(
        f"\n  app POST of {args.addresses}: p50 {app_p50 * 1000:7.1f} ms  (runs: "
        + ", ".join(f"{t * 1000:.0f}" for t in app_times)
        + ")"
    )
    print(
        f"  bare insert + publish:    p50 {bare_p50 * 1000:7.1f} ms  (runs: "
        + ", ".join(f"{t * 1000:.0f}" for t in bare_times)
        + ")"
    )
    print(f"  ratio app/bare: {ratio:.2f}   (target < 2; p50 target < 1000 ms: {'met' if app_p50 < 1 else 'missed'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
