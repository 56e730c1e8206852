"""Benchmark: a 10,000-recipient campaign written and published, and an invitation sent meanwhile.

1. Writing: `send` (the recipient list fixed in one transaction) plus the campaign pass (20 batches
   of 500: each batch's outbox rows and the campaign's progress in one transaction, then one
   pipelined publish to the bulk queue and the publication recorded), against the bare work
   underneath it measured in the same run: the same 10,000 rows inserted in batches of 500, each
   batch one transaction, each followed by one pipelined publish. Median of --runs each,
   interleaved. Target: ratio < 2.
2. The drain, at the provider's limit: --workers real `python worker.py` processes (2) send the campaign
   through the provider model at --limit requests/s (Resend's default 5), in batches of 100; the
   time from the send to the last acceptance against the ideal, ceil(N / 100) / limit. Goal:
   ratio <= 1.25, no 429, no duplicate. Meanwhile an invitation is committed every half second;
   its latency is the time from its commit to the provider's acceptance (the row's sent_at).
   Goal: p99 < 2 s. The workers' peak RSS is printed.
Loopback only; everything it starts is stopped.
Run: .venv/bin/python bench/campaign.py [--recipients 10000] [--limit 5] [--runs 3] [--invitations 20]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.processes import free_port, stop_process, wait_for_port  # noqa: E402
from devtools.testing import PrivateRedis, process_env, start_workers  # noqa: E402
from portal.auth.queries import load_user  # noqa: E402
from portal.campaigns import operations  # noqa: E402
from portal.campaigns.emails import CAMPAIGN  # noqa: E402
from portal.campaigns.sending import BATCH_SIZE, campaign_pass  # noqa: E402
from portal.context import build_context  # noqa: E402
from portal.core import clock, schema  # noqa: E402
from portal.core.settings import Settings  # noqa: E402
from portal.invitations.operations import invite_colleagues  # noqa: E402
from portal.outbox.ground.provider import BATCH_LIMIT  # noqa: E402
from portal.outbox.ground.queues import BULK_EMAIL_QUEUE, queue_named  # noqa: E402
from portal.outbox.write.publish import enqueue_envelopes  # noqa: E402
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


def measure_drain(ctx, settings: Settings, workdir: Path, model, admin_id, audience, args, invitations: int) -> dict:
    """--workers real workers (2) already waiting; the campaign is sent, and meanwhile an invitation is
    committed every half second. Returns the drain's and the invitations' figures."""
    env = process_env(
        settings,
        workdir / "worker-instance",
        RESEND_API_URL=model.url,
        RESEND_RATE_LIMIT_PER_SECOND=str(args.limit),
        RELAY_INTERVAL_SECONDS="60",
        CAMPAIGN_PASS_INTERVAL_SECONDS="3600",
    )
    workers = start_workers(env, args.workers)
    manager = load_user(ctx.db, _user_id(ctx.db, "manager@northwind.example"))
    committed: dict[str, float] = {}
    peak_rss_kib = 0
    try:
        time.sleep(3)  # the workers are up and waiting
        model.reset()
        campaign_id = operations.create_campaign(
            ctx.db, admin_id=admin_id, name="Drain", subject="Draining", body=BODY, audience=audience
        )
        started = time.time()
        operations.send(ctx, campaign_id=campaign_id, admin_id=admin_id, send_at=None)
        campaign_pass(ctx)
        ref = f"campaign:{campaign_id}"
        deadline = time.monotonic() + max(120, 4 * args.recipients / (100 * args.limit))
        next_invitation, next_count, drained, invited = time.monotonic(), time.monotonic(), 0, 0
        while time.monotonic() < deadline:
            if len(committed) < invitations and time.monotonic() >= next_invitation:
                address = f"invitee{len(committed)}-{uuid.uuid4().hex[:6]}@bench.example"
                invite_colleagues(ctx, manager=manager, addresses=[address], programme="language")
                committed[address] = time.time()
                next_invitation += 0.5
            peak_rss_kib = max(peak_rss_kib, *(_rss_kib(worker.pid) for worker in workers))
            if time.monotonic() >= next_count:
                # Once a second: counting 100,000 rows takes this process a good part of a CPU the
                # workers share, and the figures come from the rows' own sent_at, not from when
                # this loop saw them.
                next_count += 1.0
                drained, invited = _sent_counts(ctx.db, ref)
            if drained == args.recipients and len(committed) == invitations and invited >= invitations:
                break
            time.sleep(0.1)
        with ctx.db.read() as conn:
            last_sent = conn.execute(
                sa.text("SELECT MAX(sent_at) FROM email_outbox WHERE subject_ref = :r"), {"r": ref}
            ).scalar_one()
            latencies = [
                clock.parse(sent_at).timestamp() - committed[address]
                for address, sent_at in conn.execute(
                    sa.text(
                        "SELECT recipient, sent_at FROM email_outbox WHERE family = 'invitation' AND sent_at IS NOT NULL"
                    )
                )
                if address in committed
            ]
    finally:
        for worker in workers:
            stop_process(worker)
    if drained != args.recipients:
        raise SystemExit(f"only {drained} of {args.recipients} campaign emails were accepted in time")
    if len(latencies) < invitations:
        raise SystemExit(f"only {len(latencies)} of {invitations} invitations were accepted")
    requests = [entry for entry in model.requests() if entry["path"] == "/emails/batch"]
    per_recipient = Counter(email["to"][0] for email in model.sent() if email["subject"] == "Draining")
    arrivals = [datetime.fromisoformat(entry["at"]).timestamp() - started for entry in requests]
    return {
        "seconds": clock.parse(last_sent).timestamp() - started,
        # Where the time went: until the first request reached the provider, the spacing of the
        # requests, and when it refused one.
        "first_request": arrivals[0] if arrivals else 0.0,
        "gaps": sorted(later - earlier for earlier, later in zip(arrivals, arrivals[1:], strict=False)),
        "refused_at": [at for at, entry in zip(arrivals, requests, strict=True) if entry["status"] == 429],
        "requests": len(requests),
        "duplicates": sum(n - 1 for n in per_recipient.values()),
        "missing": args.recipients - len(per_recipient),
        "latencies": sorted(latencies),
        "peak_rss_kib": peak_rss_kib,
    }


def drain_once(ctx, settings, workdir, model, admin_id, audience, args, invitations: int) -> dict:
    """One drain from a clean queue: the earlier runs' campaign rows are out of the way."""
    with ctx.db.write() as conn:
        conn.execute(
            sa.text("UPDATE email_outbox SET status = 'cancelled' WHERE family = 'campaign' AND status != 'sent'")
        )
    ctx.redis.flushdb()
    return measure_drain(ctx, settings, workdir, model, admin_id, audience, args, invitations)


class ModelProcess:
    """The provider model in a process of its own, as the provider is another machine: its clock for
    the rate limit is not slowed by this process's polling of the database."""

    def __init__(self, limit: int):
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "devtools.provider_model", "--port", str(port), "--rate-limit", str(limit)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(port, process=self.process)

    def _call(self, path: str, body: bytes | None = None):
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=body,
            method="POST" if body is not None else "GET",
            headers={"Content-Type": "application/json"} if body is not None else {},
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.load(answer)

    def sent(self) -> list[dict]:
        return self._call("/_model/sent")

    def requests(self) -> list[dict]:
        return self._call("/_model/requests")

    def reset(self) -> None:
        self._call("/_model/reset", b"{}")

    def stop(self) -> None:
        stop_process(self.process)


def _rss_kib(pid: int) -> int:
    """A worker's peak resident memory so far (VmHWM), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _sent_counts(db, ref: str) -> tuple[int, int]:
    """(campaign emails accepted, invitations accepted)."""
    with db.read() as conn:
        drained = conn.execute(
            sa.text("SELECT COUNT(*) FROM email_outbox WHERE subject_ref = :r AND sent_at IS NOT NULL"), {"r": ref}
        ).scalar_one()
        invited = conn.execute(
            sa.text("SELECT COUNT(*) FROM email_outbox WHERE family = 'invitation' AND sent_at IS NOT NULL")
        ).scalar_one()
    return drained, invited


def _user_id(db, email: str) -> int:
    with db.read() as conn:
        return conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar_one()


def _spacing(drain: dict) -> str:
    gaps = drain["gaps"]
    spacing = (
        f"requests {_ms(percentile(gaps, 0.5))} apart (p50), p90 {_ms(percentile(gaps, 0.9))}, max {_ms(gaps[-1])}"
        if gaps
        else "one request"
    )
    refused = ", ".join(f"{at:.1f}" for at in drain["refused_at"])
    return spacing + (f"; 429s at {refused} s after the send" if refused else "")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipients", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--invitations", type=int, default=20)
    parser.add_argument("--limit", type=int, default=5, help="the provider's requests per second")
    parser.add_argument("--workers", type=int, default=2, help="worker processes draining the campaign")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-campaign-"))
    redis_server = PrivateRedis().start()
    model = ModelProcess(args.limit)
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
        seed_demo(ctx.db, secret_key=settings.secret_key, attendance=False)
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

        ideal = math.ceil(args.recipients / BATCH_LIMIT) / args.limit
        print(f"\ndraining a {args.recipients:,}-recipient campaign with {args.workers} workers at {args.limit} req/s…")
        alone = drain_once(ctx, settings, workdir, model, admin_id, audience, args, invitations=0)
        print(
            f"  accepted in {alone['seconds']:.1f} s, the first request {alone['first_request']:.1f} s after the send; "
            f"workers' peak RSS {alone['peak_rss_kib'] / 1024:.0f} MiB"
        )
        print(f"  {_spacing(alone)}")
        print(f"again, with {args.invitations} invitations committed meanwhile, one every half second…")
        busy = drain_once(ctx, settings, workdir, model, admin_id, audience, args, invitations=args.invitations)
        latencies = busy["latencies"]
        p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
        print(
            f"  invitation commit -> provider accepted: p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
            f"max {latencies[-1] * 1000:.0f} ms  (goal p99 < 2 s: {'met' if p99 < 2 else 'missed'}); "
            f"the campaign took {busy['seconds']:.1f} s beside them, 429s {len(busy['refused_at'])}, "
            f"duplicates {busy['duplicates']}"
        )
        print(f"  {_spacing(busy)}")
        print(
            f"campaign {args.recipients} at {args.limit} req/s: accepted in {alone['seconds']:.1f} s "
            f"(ideal {ideal:.1f} s), ratio {alone['seconds'] / ideal:.2f}, requests {alone['requests']}, "
            f"429s {len(alone['refused_at'])}, duplicates {alone['duplicates']}"
        )
    finally:
        ctx.db.dispose()
        model.stop()
        redis_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
