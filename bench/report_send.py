"""Benchmark: a month's report emails sent at the provider's limit, and invitations committed meanwhile.

Report emails carry a PDF, which Resend's batch endpoint does not take, so each is one request:
--companies (2,000) subscribed managers' monthly reports at --limit requests/s (Resend's 5) take at
least companies / limit seconds (400 s), the ideal. --workers real `python worker.py` processes (2)
are waiting; one pass of the report schedule (`run_due`) writes and publishes the run, and the time
from the pass's start to the last report's acceptance (the rows' sent_at) is compared with the
ideal. Goal: ratio <= 1.1, no 429, no duplicate. Meanwhile --invitations (20) invitations are
committed, spread over the ideal drain; each one's latency is the time from its commit to the
provider's acceptance. Goal: max < 2 s (report emails ride the bulk queue, which workers take only
when the transactional one is empty). The provider model runs in a process of its own.
Loopback only; everything it starts is stopped.
Run: .venv/bin/python bench/report_send.py [--companies 2000] [--limit 5] [--workers 2] [--invitations 20]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.campaign import ModelProcess, percentile  # noqa: E402
from bench.report_run import seed  # noqa: E402
from devtools.processes import stop_process  # noqa: E402
from devtools.testing import PrivateRedis, process_env, start_workers  # noqa: E402
from portal.auth.queries import load_user  # noqa: E402
from portal.context import build_context  # noqa: E402
from portal.core import clock, schema  # noqa: E402
from portal.core.settings import Settings  # noqa: E402
from portal.invitations.operations import invite_colleagues  # noqa: E402
from portal.report_emails.operations import run_due  # noqa: E402


def subscribe_one_manager_each(db, since: str) -> None:
    """report_run.seed subscribes 2 managers a company: here one, so a company is one report email."""
    with db.write() as conn:
        conn.execute(
            sa.text("DELETE FROM report_subscriptions WHERE user_id IN (SELECT id FROM users WHERE email LIKE 'm1@%')")
        )
        conn.execute(sa.text("UPDATE report_subscriptions SET since = :s"), {"s": since})


def sent_counts(db) -> tuple[int, int]:
    """(report emails accepted, invitations accepted)."""
    with db.read() as conn:
        reports = conn.execute(
            sa.text("SELECT COUNT(*) FROM email_outbox WHERE family = 'report' AND sent_at IS NOT NULL")
        ).scalar_one()
        invited = conn.execute(
            sa.text("SELECT COUNT(*) FROM email_outbox WHERE family = 'invitation' AND sent_at IS NOT NULL")
        ).scalar_one()
    return reports, invited


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", type=int, default=2000)
    parser.add_argument("--limit", type=int, default=5, help="the provider's requests per second")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--invitations", type=int, default=20)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-report-send-"))
    redis_server = PrivateRedis().start()
    model = ModelProcess(args.limit)
    settings = Settings.from_env(
        {
            "DATABASE_URL": f"sqlite+libsql:///{workdir / 'portal.db'}",
            "REDIS_URL": redis_server.url,
            "SECRET_KEY": "bench",
            "PORTAL_INSTANCE_PATH": str(workdir / "instance"),
            "RESEND_API_URL": model.url,
            "RESEND_RATE_LIMIT_PER_SECOND": str(args.limit),
        }
    )
    ctx = build_context(settings)
    workers: list[subprocess.Popen] = []
    ideal = args.companies / args.limit
    try:
        schema.upgrade(ctx.db)
        print(f"seeding {args.companies} companies, one subscribed manager each…")
        seed(ctx.db, args.companies, volunteers=1)
        # Subscribed since yesterday: no period has closed for the workers' own schedule pass; this
        # bench's pass runs 40 days on, when one month has.
        since = clock.utcnow() - timedelta(days=1)
        subscribe_one_manager_each(ctx.db, clock.iso(since))
        env = process_env(
            settings,
            workdir / "worker-instance",
            RESEND_API_URL=model.url,
            RESEND_RATE_LIMIT_PER_SECOND=str(args.limit),
            RELAY_INTERVAL_SECONDS="60",
            REPORT_SCHEDULE_INTERVAL_SECONDS="86400",
        )
        workers = start_workers(env, args.workers)
        time.sleep(3)  # the workers are up and waiting, as production's are
        with ctx.db.read() as conn:
            manager_id = conn.execute(sa.text("SELECT id FROM users WHERE email = 'm0@c1.example'")).scalar_one()
        manager = load_user(ctx.db, manager_id)

        print(f"one schedule pass: {args.companies} report emails, {args.workers} workers at {args.limit} req/s…")
        started = time.time()
        written = run_due(ctx, now=since + timedelta(days=40)).emails
        if written != args.companies:
            raise SystemExit(f"the pass wrote {written} report emails, expected {args.companies}")
        wrote = time.time() - started
        print(f"  written and published in {wrote:.1f} s; invitations meanwhile…")
        committed: dict[str, float] = {}
        every = ideal / max(args.invitations, 1)
        next_invitation, deadline = time.monotonic() + every / 2, time.monotonic() + 3 * ideal + 120
        reports = invited = 0
        while time.monotonic() < deadline:
            if len(committed) < args.invitations and time.monotonic() >= next_invitation:
                address = f"invitee{len(committed)}-{uuid.uuid4().hex[:6]}@bench.example"
                invite_colleagues(ctx, manager=manager, addresses=[address], programme="language")
                committed[address] = time.time()
                next_invitation += every
            reports, invited = sent_counts(ctx.db)
            if reports == args.companies and len(committed) == args.invitations and invited >= args.invitations:
                break
            time.sleep(0.5)
        with ctx.db.read() as conn:
            accepted_at = sorted(
                clock.parse(sent_at).timestamp() - started
                for sent_at in conn.execute(
                    sa.text("SELECT sent_at FROM email_outbox WHERE family = 'report' AND sent_at IS NOT NULL")
                ).scalars()
            )
            latencies = sorted(
                clock.parse(sent_at).timestamp() - committed[address]
                for address, sent_at in conn.execute(
                    sa.text(
                        "SELECT recipient, sent_at FROM email_outbox WHERE family = 'invitation' AND sent_at IS NOT NULL"
                    )
                )
                if address in committed
            )
        requests = [entry for entry in model.requests() if entry["path"] == "/emails"]
        refused = sum(1 for entry in requests if entry["status"] == 429)
        keys = Counter(email["idempotency_key"] for email in model.sent())
        duplicates = sum(n - 1 for n in keys.values())
    finally:
        for worker in workers:
            stop_process(worker)
        ctx.db.dispose()
        model.stop()
        redis_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    if reports != args.companies:
        raise SystemExit(f"only {reports} of {args.companies} report emails were accepted in time")
    if len(latencies) < args.invitations:
        raise SystemExit(f"only {len(latencies)} of {args.invitations} invitations were accepted")
    seconds = accepted_at[-1]
    # Where the time went: the first acceptance, then the pace while the pass still wrote and after.
    during = sum(1 for at in accepted_at if at <= wrote)
    after_rate = (len(accepted_at) - during) / max(seconds - wrote, 1e-9)
    print(
        f"\n  first acceptance {accepted_at[0]:.1f} s after the pass began; {during} accepted while it wrote "
        f"({during / wrote:.2f}/s), then {after_rate:.2f}/s"
    )
    ratio = seconds / ideal
    worst = latencies[-1] if latencies else 0.0
    print(
        f"  invitation commit -> provider accepted: p50 {percentile(latencies, 0.5) * 1000:.0f} ms, "
        f"max {worst * 1000:.0f} ms over {len(latencies)}  (goal < 2 s: {'met' if worst < 2 else 'missed'})"
    )
    print(
        f"report emails {args.companies} at {args.limit} req/s, one request each: accepted in {seconds:.1f} s "
        f"(ideal {ideal:.1f} s), ratio {ratio:.3f} (goal <= 1.1: {'met' if ratio <= 1.1 else 'missed'}); "
        f"invitations meanwhile max {worst * 1000:.0f} ms (goal < 2 s: {'met' if worst < 2 else 'missed'}); "
        f"requests {len(requests)}, 429s {refused}, duplicates {duplicates}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
