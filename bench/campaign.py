"""Benchmark: a 10,000-recipient campaign written and published, and an invitation sent meanwhile.

1. Writing: `send` (the recipient list fixed in one transaction) plus the campaign pass (20 batches
   of 500: each batch's outbox rows and the campaign's progress in one transaction, then one
   pipelined publish to the bulk queue and the publication recorded), against the bare work
   underneath it measured in the same run: the same 10,000 rows inserted in batches of 500, each
   batch one transaction, each followed by one pipelined publish. Median of --runs each,
   interleaved. Target: ratio < 2.
2. Transactional first: two real `python worker.py` processes drain the campaign through the
   provider model at Resend's default 5 requests/s; meanwhile an invitation is committed every
   half second, and its latency is the time from its commit to the provider's acceptance (the
   row's sent_at). Prints p50/p99. Target: every one within 5 s.
Loopback only; everything it starts is stopped.
Run: .venv/bin/python bench/campaign.py [--recipients 10000] [--runs 3] [--invitations 20]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.processes import stop_process  # noqa: E402
from devtools.provider_model import ProviderModel  # noqa: E402
from devtools.testing import PrivateRedis, process_env  # noqa: E402
from portal.auth.queries import load_user  # noqa: E402
from portal.campaigns import operations  # noqa: E402
from portal.campaigns.emails import CAMPAIGN  # noqa: E402
from portal.campaigns.sending import BATCH_SIZE, campaign_pass  # noqa: E402
from portal.context import build_context  # noqa: E402
from portal.core import clock, schema  # noqa: E402
from portal.core.settings import Settings  # noqa: E402
from portal.invitations.operations import invite_colleagues  # noqa: E402
from portal.outbox.publish import enqueue_envelopes  # noqa: E402
from portal.outbox.queues import BULK_EMAIL_QUEUE, queue_named  # noqa: E402
from portal.seed import seed_demo  # noqa: E402

BODY = "## Autumn at TEEI\n\n" + "New sessions open for language partners and mentors. " * 20


def add_people(db, company_id: int, count: int) -> None:
    """`count` volunteers of one company, inserted directly (hashing 10,000 passwords is not the point)."""
    now = clock.now_iso()
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO users (email, name, password_hash, role, company_id, programme, created_at) "
                "VALUES (:e, :n, 'x', 'employee', :c, 'language', :now)"
            ),
            [
                {"e": f"volunteer{n}@bench.example", "n": f"Volunteer {n}", "c": company_id, "now": now}
                for n in range(count)
            ],
        )


def time_campaign(ctx, admin_id: int, audience: str) -> tuple[float, int]:
    campaign_id = operations.create_campaign(
        ctx.db, admin_id=admin_id, name="Bench", subject="Autumn at TEEI", body=BODY, audience=audience
    )
    started = time.perf_counter()
    operations.send(ctx, campaign_id=campaign_id, admin_id=admin_id, send_at=None)
    written = campaign_pass(ctx)
    return time.perf_counter() - started, written


def time_bare(ctx, recipients: list[tuple[int, str, str]]) -> float:
    """The same rows (same template input) in batches of BATCH_SIZE, each one transaction and one pipelined publish."""
    queue = queue_named(ctx.redis, BULK_EMAIL_QUEUE)
    bare_campaign = uuid.uuid4().hex
    shared = {"campaign_id": 0, "subject": "Autumn at TEEI", "body": BODY}
    started = time.perf_counter()
    for start in range(0, len(recipients), BATCH_SIZE):
        rows = [
            {
                "id": CAMPAIGN.new_outbox_id(),
                "r": email,
                "key": f"bare:{bare_campaign}:{user_id}",
                "data": json.dumps({**shared, "user_id": user_id, "recipient_name": name}, sort_keys=True),
            }
            for user_id, email, name in recipients[start : start + BATCH_SIZE]
        ]
        with ctx.db.write() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO email_outbox (id, family, recipient, idempotency_key, template, template_version, "
                    "layout_version, template_input, environment, created_at, updated_at) VALUES "
                    "(:id, 'campaign', :r, :key, 'campaign', 1, 1, :data, 'development', 'now', 'now')"
                ),
                rows,
            )
        enqueue_envelopes(queue, [row["id"] for row in rows])
    return time.perf_counter() - started


def measure_writing(ctx, admin_id: int, audience: str, runs: int) -> tuple[list[float], list[float], int]:
    with ctx.db.read() as conn:
        recipients = [
            tuple(row)
            for row in conn.execute(
                sa.text(
                    "SELECT id, email, name FROM users WHERE role = 'employee' AND email LIKE '%@bench.example' ORDER BY id"
                )
            )
        ]
    ours, bare, written = [], [], 0
    for _ in range(runs):
        seconds, written = time_campaign(ctx, admin_id, audience)
        ours.append(seconds)
        bare.append(time_bare(ctx, recipients))
        ctx.redis.flushdb()  # each run publishes to an empty queue, as the first did
    return ours, bare, written


def measure_invitations(ctx, settings: Settings, workdir: Path, model, admin_id, audience, count: int) -> list[float]:
    env = process_env(
        settings,
        workdir / "worker-instance",
        RESEND_API_URL=model.url,
        RELAY_INTERVAL_SECONDS="60",
        CAMPAIGN_PASS_INTERVAL_SECONDS="3600",
    )
    campaign_id = operations.create_campaign(
        ctx.db, admin_id=admin_id, name="Drain", subject="Draining", body=BODY, audience=audience
    )
    operations.send(ctx, campaign_id=campaign_id, admin_id=admin_id, send_at=None)
    campaign_pass(ctx)
    workers = [
        subprocess.Popen(
            [sys.executable, "worker.py"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for _ in range(2)
    ]
    manager = load_user(ctx.db, _user_id(ctx.db, "manager@northwind.example"))
    committed: dict[str, float] = {}
    try:
        time.sleep(3)  # the workers are up and the bulk queue is draining
        for n in range(count):
            address = f"invitee{n}-{uuid.uuid4().hex[:6]}@bench.example"
            invite_colleagues(ctx, manager=manager, addresses=[address], programme="language")
            committed[address] = time.time()
            time.sleep(0.5)
        deadline = time.monotonic() + 60
        latencies: dict[str, float] = {}
        while len(latencies) < count and time.monotonic() < deadline:
            with ctx.db.read() as conn:
                for address, sent_at in conn.execute(
                    sa.text(
                        "SELECT recipient, sent_at FROM email_outbox WHERE family = 'invitation' AND sent_at IS NOT NULL"
                    )
                ):
                    if address in committed:
                        latencies[address] = clock.parse(sent_at).timestamp() - committed[address]
            time.sleep(0.2)
        with ctx.db.read() as conn:
            drained = conn.execute(
                sa.text("SELECT COUNT(*) FROM email_outbox WHERE subject_ref = :r AND sent_at IS NOT NULL"),
                {"r": f"campaign:{campaign_id}"},
            ).scalar_one()
        print(f"  (meanwhile the workers sent {drained} of the campaign's emails, at the 5/s rate limit)")
    finally:
        for worker in workers:
            stop_process(worker)
    if len(latencies) < count:
        raise SystemExit(f"only {len(latencies)} of {count} invitations were accepted within 60 s")
    return sorted(latencies.values())


def _user_id(db, email: str) -> int:
    with db.read() as conn:
        return conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar_one()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipients", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--invitations", type=int, default=20)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-campaign-"))
    redis_server = PrivateRedis().start()
    model = ProviderModel(port=0, rate_limit_per_second=5).start()
    settings = Settings.from_env(
        {
            "DATABASE_URL": f"sqlite+libsql:///{workdir / 'portal.db'}",
            "REDIS_URL": redis_server.url,
            "SECRET_KEY": "bench",
            "PORTAL_INSTANCE_PATH": str(workdir / "instance"),
            "RESEND_API_URL": model.url,
        }
    )
    ctx = build_context(settings)
    try:
        schema.upgrade(ctx.db)
        seed_demo(ctx.db, attendance=False)
        admin_id = _user_id(ctx.db, "admin@teei.example")
        with ctx.db.write() as conn:
            company_id = conn.execute(
                sa.text("INSERT INTO companies (name, name_key) VALUES ('Bench Corp', 'bench corp') RETURNING id")
            ).scalar_one()
        add_people(ctx.db, company_id, args.recipients)
        audience = f"company:{company_id}"

        print(
            f"writing and publishing a {args.recipients:,}-recipient campaign, {args.runs} runs, against the bare work…"
        )
        ours, bare, written = measure_writing(ctx, admin_id, audience, args.runs)
        if written != args.recipients:
            raise SystemExit(f"the campaign wrote {written} rows, not {args.recipients}")
        ratio = statistics.median(ours) / statistics.median(bare)
        print(
            f"\n  campaign send + pass:   p50 {statistics.median(ours) * 1000:8.1f} ms  (runs: "
            + ", ".join(f"{t * 1000:.0f}" for t in ours)
            + ")"
        )
        print(
            f"  bare insert + publish:  p50 {statistics.median(bare) * 1000:8.1f} ms  (runs: "
            + ", ".join(f"{t * 1000:.0f}" for t in bare)
            + ")"
        )
        print(f"  ratio campaign/bare: {ratio:.2f}   (target < 2: {'met' if ratio < 2 else 'missed'})")

        print(
            f"\ndraining a {args.recipients:,}-recipient campaign with 2 workers; {args.invitations} invitations meanwhile…"
        )
        latencies = measure_invitations(ctx, settings, workdir, model, admin_id, audience, args.invitations)
        p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
        print(
            f"  invitation commit -> provider accepted: p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms"
        )
        print(f"  (target: every one within 5 s: {'met' if latencies[-1] < 5 else 'missed'})")
    finally:
        ctx.db.dispose()
        model.stop()
        redis_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
