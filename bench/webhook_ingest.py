"""How fast the portal takes provider receipts, next to a bare Flask app on the same server setup.

    .venv/bin/python bench/webhook_ingest.py [--receipts 2000] [--clients 4] [--workers 2] [--rounds 3] [--strict]

Both runs use gunicorn with 2 workers (gunicorn.conf.py: threaded) on a free loopback port, and the same pre-signed
requests (signed just before the runs: well inside the five minutes a signature is good for)
sent from a few client threads. The portal runs against a fresh database migrated from
migrations/, with one `sent` outbox row per receipt, so every receipt is verified, stored and
applied (an `email.delivered` that moves its row). The bare app reads the body and answers 200.
Prints receipts/second for both and their ratio (target: at least 0.4). Each round runs the portal,
then the bare app right after it, on fresh receipts; the median of the rounds' ratios is the result
(on a shared machine the speed of both moves with whatever else runs). Loopback only, bounded in
count and time. With --strict, a median under the target is a failure exit; a receipt that is not
answered 200 or not applied always is.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_RATIO = 0.4
PHASE_TIME_LIMIT_SECONDS = 120
WARMUP_REQUESTS = 50


def bare_app():
    """The baseline: gunicorn imports this module and calls this factory in each worker."""
    from flask import Flask, request

    app = Flask("bare")

    @app.post("/webhooks/resend")
    def receive():
        request.get_data()
        return "{}", 200, {"content-type": "application/json"}

    return app


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--receipts", type=int, default=2000, help="receipts per run (100-20000)")
    parser.add_argument("--clients", type=int, default=4, help="client threads (1-16)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers for both apps (1-8)")
    parser.add_argument("--rounds", type=int, default=3, help="portal/bare pairs; the median ratio counts (1-9)")
    parser.add_argument("--strict", action="store_true", help=f"exit 1 if the ratio is under {TARGET_RATIO}")
    args = parser.parse_args(argv)
    count = min(max(args.receipts, 100), 20_000)
    rounds = min(max(args.rounds, 1), 9)
    clients = min(max(args.clients, 1), 16)
    workers = min(max(args.workers, 1), 8)

    sys.path.insert(0, str(REPO))
    from devtools.testing import PrivateRedis
    from portal.core import schema
    from portal.core.db import Database

    secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    redis = PrivateRedis().start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-webhook-") as tmp:
            database_url = f"sqlite+libsql:///{Path(tmp) / 'portal.db'}"
            db = Database(database_url)
            schema.upgrade(db)
            message_ids = seed_sent_rows(db, rounds * (WARMUP_REQUESTS + count))
            db.dispose()
            env = {
                **os.environ,
                "DATABASE_URL": database_url,
                "REDIS_URL": redis.url,
                "SECRET_KEY": secrets.token_hex(16),
                "PORTAL_ENV": "development",
                "RESEND_WEBHOOK_SECRET": secret,
                "PORTAL_INSTANCE_PATH": str(Path(tmp) / "instance"),
            }
            results = []
            for round_number in range(rounds):
                ids = message_ids[round_number * (WARMUP_REQUESTS + count) :][: WARMUP_REQUESTS + count]
                # Signed just before the round: well inside the five minutes a signature is good for.
                requests_ = [raw_request(*signed_receipt(secret, message_id)) for message_id in ids]
                warmup, measured = requests_[:WARMUP_REQUESTS], requests_[WARMUP_REQUESTS:]
                portal = run_phase("portal:create_app()", env, warmup, measured, clients, workers)
                bare = run_phase("webhook_ingest:bare_app()", env, warmup, measured, clients, workers)
                results.append((portal, bare))
                print_round(round_number + 1, portal, bare, count, clients, workers)
            db = Database(database_url)
            applied = applied_count(db)
            db.dispose()
    finally:
        redis.stop()

    ratios = [portal["rate"] / bare["rate"] for portal, bare in results]
    median = statistics.median(ratios)
    print(
        f"median ratio:   {median:8.2f}  over {rounds} rounds ({', '.join(f'{r:.2f}' for r in ratios)}; "
        f"target >= {TARGET_RATIO}); {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    problems = []
    failures = sum(portal["failures"] + bare["failures"] for portal, bare in results)
    if failures:
        problems.append(f"{failures} answers were not 200")
    if applied != rounds * (WARMUP_REQUESTS + count):
        problems.append(f"only {applied} of {rounds * (WARMUP_REQUESTS + count)} receipts were applied")
    if args.strict and median < TARGET_RATIO:
        problems.append("median ratio under target")
    for problem in problems:
        print(f"FAILED: {problem}")
    return 1 if problems else 0


def print_round(number: int, portal: dict, bare: dict, count: int, clients: int, workers: int) -> None:
    print(
        f"round {number}: portal {portal['rate']:7.1f} receipts/s ({count} in {portal['seconds']:.2f}s, "
        f"{clients} clients, gunicorn {workers} threaded workers); bare {bare['rate']:7.1f} requests/s; "
        f"ratio {portal['rate'] / bare['rate']:.2f}; server CPU per request: portal {portal['cpu_us']:.0f} µs, "
        f"bare {bare['cpu_us']:.0f} µs",
        flush=True,
    )


def seed_sent_rows(db, count: int) -> list[str]:
    """One accepted email per receipt, inserted as the engine leaves it: status sent, with its ID."""
    import sqlalchemy as sa

    from portal.core import clock
    from portal.outbox.ground.statuses import SENT

    now = clock.now_iso()
    rows = [
        {
            "id": f"inv_{uuid.uuid4().hex}",
            "key": f"bench/{i}",
            "mid": str(uuid.uuid4()),
            "recipient": f"person{i}@example.com",
            "status": SENT,
            "now": now,
        }
        for i in range(count)
    ]
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO email_outbox (id, family, recipient, idempotency_key, provider_message_id, status, "
                "template, template_version, layout_version, template_input, environment, created_at, updated_at) "
                "VALUES (:id, 'invitation', :recipient, :key, :mid, :status, 'invitation', 1, 1, '{}', "
                "'development', :now, :now)"
            ),
            rows,
        )
    return [row["mid"] for row in rows]


def signed_receipt(secret: str, message_id: str) -> tuple[bytes, dict]:
    from svix.webhooks import Webhook

    now = datetime.now(UTC)
    body = json.dumps(
        {
            "type": "email.delivered",
            "created_at": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "data": {
                "email_id": message_id,
                "from": "Partner Portal <portal@localhost>",
                "to": ["person@example.com"],
                "subject": "You are invited",
                "created_at": now.isoformat(),
                "tags": {"environment": "development", "family": "invitation"},
            },
        }
    )
    event_id = f"msg_{uuid.uuid4().hex}"
    headers = {
        "content-type": "application/json",
        "svix-id": event_id,
        "svix-timestamp": str(int(now.timestamp())),
        "svix-signature": Webhook(secret).sign(event_id, now, body),
    }
    return body.encode(), headers


def run_phase(app_spec: str, env: dict, warmup: list, measured: list, clients: int, workers: int) -> dict:
    from devtools.processes import free_port, stop_process, wait_for_port

    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--workers",
            str(workers),
            "--bind",
            f"127.0.0.1:{port}",
            "--pythonpath",
            str(REPO / "bench"),
            "--log-level",
            "warning",
            app_spec,
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,  # gunicorn.conf.py's access log, one line per request; errors stay on stderr
    )
    try:
        wait_for_port(port, timeout=30, process=server)
        send_all(port, warmup, clients)  # both workers loaded and connected before the clock starts
        cpu_before = server_cpu_seconds(server.pid)
        started = time.perf_counter()
        failures = send_all(port, measured, clients)
        seconds = time.perf_counter() - started
        cpu = server_cpu_seconds(server.pid) - cpu_before
    finally:
        stop_process(server)
    return {
        "rate": len(measured) / seconds,
        "seconds": seconds,
        "failures": failures,
        "cpu_us": cpu / len(measured) * 1e6,
    }


def server_cpu_seconds(pid: int) -> float:
    """CPU time used by gunicorn and its workers (Linux /proc; NaN elsewhere).

    Printed beside the rates because on a shared or small machine the rates move with whatever
    else runs, while the CPU each request costs hardly does.
    """
    from devtools.processes import process_cpu_seconds

    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return sum(process_cpu_seconds(process) for process in [pid, *map(int, children)])
    except (OSError, ValueError, IndexError):
        return float("nan")


def send_all(port: int, items: list, clients: int) -> int:
    """Send every request from `clients` threads; return how many were not answered 200."""
    lock, position, failures = threading.Lock(), [0], [0]
    deadline = time.monotonic() + PHASE_TIME_LIMIT_SECONDS

    def client():
        while time.monotonic() < deadline:
            with lock:
                if position[0] >= len(items):
                    return
                request = items[position[0]]
                position[0] += 1
            if not post_raw(port, request):
                with lock:
                    failures[0] += 1

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures[0] + (len(items) - position[0])


def raw_request(body: bytes, headers: dict) -> bytes:
    """The whole HTTP request, built before the clock starts: the load generator shares the CPUs
    with the servers it measures, so it should spend as little of them as it can."""
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return (
        f"POST /webhooks/resend HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
        f"Connection: close\r\n{head}\r\n"
    ).encode() + body


def post_raw(port: int, request: bytes) -> bool:
    """One request on a new connection (the baseline and the portal alike)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(request)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    except OSError:
        return False
    return answer.startswith((b"HTTP/1.1 200 ", b"HTTP/1.0 200 "))


def applied_count(db) -> int:
    import sqlalchemy as sa

    with db.read() as conn:
        return conn.execute(sa.text("SELECT COUNT(*) FROM email_receipts WHERE outcome = 'applied'")).scalar()


if __name__ == "__main__":
    sys.exit(main())
