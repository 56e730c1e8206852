"""A burst against the provider's rate limit, shared by every worker.

    .venv/bin/python bench/rate_limit.py [--emails 500] [--workers 3] [--limit 50]

Commits and publishes N notice emails at once, starts W real `python worker.py` processes with
RESEND_RATE_LIMIT_PER_SECOND=L against the provider model limited to L requests per second, and
waits until every row is `sent`. Prints the share of provider requests answered 429 (target at
most 1%) and the time from the first request to the last acceptance against the ideal N / L
seconds (target within 10%). Exits non-zero if an email is missing or sent twice; a figure off its
target is reported, not failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emails", type=int, default=500)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=180)
    args = parser.parse_args(argv)

    import sqlalchemy as sa

    from devtools.processes import stop_process
    from devtools.provider_model import ProviderModel
    from devtools.testing import PrivateRedis
    from portal.context import build_context
    from portal.core import clock, schema
    from portal.core.settings import Settings
    from portal.email_families import FAMILIES
    from portal.outbox import EmailIntent
    from portal.outbox.write.intents import add_outbox_rows
    from portal.outbox.write.publish import publish_outbox_rows

    redis_server = PrivateRedis().start()
    model = ProviderModel(port=0, rate_limit_per_second=args.limit).start()
    processes: list[subprocess.Popen] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-rate-") as tmp:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "DATABASE_URL": f"sqlite+libsql:///{Path(tmp) / 'portal.db'}",
                "REDIS_URL": redis_server.url,
                "SECRET_KEY": "bench-secret-key",
                "RESEND_API_URL": model.url,
                "RESEND_RATE_LIMIT_PER_SECOND": str(args.limit),
                "PORTAL_INSTANCE_PATH": str(Path(tmp) / "instance"),
            }
            ctx = build_context(Settings.from_env(env))
            schema.upgrade(ctx.db)
            intents = [
                EmailIntent(FAMILIES["notice"], f"person{i}@example.org", f"bench:{i}", {"subject": "S", "body": "B"})
                for i in range(args.emails)
            ]
            with ctx.db.write() as conn:
                ids = add_outbox_rows(conn, intents, ctx.settings, now=clock.utcnow())
            publish_outbox_rows(ctx.db, ctx.redis, ids, now=clock.utcnow())
            print(f"{args.emails} emails published; {args.workers} workers, limit {args.limit}/s on both sides…")
            for _ in range(args.workers):
                processes.append(
                    subprocess.Popen(
                        [sys.executable, str(ROOT / "worker.py")],
                        env=env,
                        cwd=ROOT,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
            deadline = time.monotonic() + args.timeout
            while time.monotonic() < deadline:
                with ctx.db.read() as conn:
                    left = conn.execute(sa.text("SELECT COUNT(*) FROM email_outbox WHERE status != 'sent'")).scalar()
                if not left:
                    break
                time.sleep(0.2)
            with ctx.db.read() as conn:
                stuck = conn.execute(
                    sa.text(
                        "SELECT status, last_error, attempt_count, COUNT(*) FROM email_outbox "
                        "WHERE status != 'sent' GROUP BY 1, 2, 3"
                    )
                ).all()
            ctx.db.dispose()
    finally:
        for process in processes:
            stop_process(process)
        requests = model.requests()
        sent = model.sent()
        model.stop()
        redis_server.stop()

    if left or len(sent) != args.emails:
        print(f"FAILED: {left} rows not sent; the model sent {len(sent)} emails for {args.emails} rows")
        for status, error, attempts, count in stuck:
            print(f"  {count} rows {status} ({error}) after {attempts} attempts")
        return 1
    limited = sum(1 for r in requests if r["status"] == 429)
    times = [datetime.fromisoformat(r["at"]) for r in requests]
    accepted = [datetime.fromisoformat(r["at"]) for r in requests if r["status"] == 200]
    elapsed = (max(accepted) - min(times)).total_seconds()
    ideal = args.emails / args.limit
    share = limited / len(requests)
    print(f"provider requests: {len(requests)}, answered 429: {limited} ({share:.1%}; target ≤ 1%)")
    print(
        f"first request to last acceptance: {elapsed:.2f} s; ideal {ideal:.2f} s; "
        f"ratio {elapsed / ideal:.3f} (target within 10%: 0.9–1.1)"
    )
    ok = share <= 0.01 and abs(elapsed / ideal - 1) <= 0.10
    print("targets met" if ok else "a target is not met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
