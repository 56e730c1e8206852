"""One relay pass over a large outbox against the same pass over a small one.

    .venv/bin/python bench/relay_scale.py [--settled 1000000] [--due 1000] [--passes 7]

Two libSQL files built from the migrations: "large" holds --settled settled rows and --due rows
due for the relay (pending); "small" holds the --due rows only. Each pass is the worker's
`relay_pass` (find the due rows, publish them to a private Redis, record the publication); before
each pass the due rows are made due again. Prints the median pass time of each and their ratio
(target < 1.5): the relay's cost should follow the due rows, not the table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TARGET = 1.5


def build(db, settled: int, due: int) -> None:
    import sqlalchemy as sa

    from portal.outbox.ground.rows import ALWAYS_DUE

    columns = (
        "id, family, recipient, idempotency_key, provider_message_id, status, template, template_version, "
        "layout_version, template_input, environment, relay_since, sent_at, created_at, updated_at"
    )
    with db.write() as conn:
        if settled:
            conn.execute(
                sa.text(
                    f"""
                    WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < :count)
                    INSERT INTO email_outbox ({columns})
                    SELECT printf('ntc_%032x', x), 'notice', 'p' || x || '@example.org', 'settled:' || x,
                           're_' || x, CASE x % 3 WHEN 0 THEN 'sent' WHEN 1 THEN 'delivered' ELSE 'failed' END,
                           'notice', 1, 1, '{{}}', 'development', NULL,
                           '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z'
                    FROM n
                    """
                ),
                {"count": settled},
            )
        conn.execute(
            sa.text(
                f"""
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < :count)
                INSERT INTO email_outbox ({columns})
                SELECT printf('ntc_f%031x', x), 'notice', 'd' || x || '@example.org', 'due:' || x, NULL, 'pending',
                       'notice', 1, 1, '{{}}', 'development', :always_due, NULL,
                       '2026-06-01T00:00:00.000000Z', '2026-06-01T00:00:00.000000Z'
                FROM n
                """
            ),
            {"count": due, "always_due": ALWAYS_DUE},
        )


def make_due_again(db) -> None:
    import sqlalchemy as sa

    from portal.outbox.ground.rows import ALWAYS_DUE

    with db.write() as conn:
        conn.execute(
            sa.text("UPDATE email_outbox SET status = 'pending', relay_since = :d WHERE idempotency_key LIKE 'due:%'"),
            {"d": ALWAYS_DUE},
        )


def time_passes(db, redis, settings, passes: int, due: int) -> float:
    from portal.core import clock
    from portal.outbox.write.relay import relay_pass

    times = []
    for _ in range(passes):
        make_due_again(db)
        redis.flushall()
        started = time.perf_counter()
        report = relay_pass(db, redis, settings, now=clock.utcnow())
        times.append(time.perf_counter() - started)
        if len(report.published) != min(due, 500) or not report.queued:
            raise SystemExit(f"a pass published {len(report.published)} rows (queued={report.queued})")
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settled", type=int, default=1_000_000)
    parser.add_argument("--due", type=int, default=1000)
    parser.add_argument("--passes", type=int, default=7)
    args = parser.parse_args(argv)

    from devtools.testing import PrivateRedis
    from portal.core import schema
    from portal.core.db import Database
    from portal.core.settings import Settings

    redis_server = PrivateRedis().start()
    redis = redis_server.client()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-relay-") as tmp:
            results = {}
            for label, settled in (("small", 0), ("large", args.settled)):
                url = f"sqlite+libsql:///{Path(tmp) / f'{label}.db'}"
                db = Database(url)
                schema.upgrade(db)
                started = time.perf_counter()
                build(db, settled, args.due)
                print(f"{label}: {settled + args.due:,} rows built in {time.perf_counter() - started:.1f} s")
                settings = Settings.from_env(
                    {"DATABASE_URL": url, "REDIS_URL": redis_server.url, "SECRET_KEY": "bench"},
                    instance_path=Path(tmp) / "instance",
                )
                results[label] = time_passes(db, redis, settings, args.passes, args.due)
                db.dispose()
    finally:
        redis_server.stop()

    ratio = results["large"] / results["small"]
    print(f"relay pass, {args.due:,} due among {args.due:,} rows:  {results['small'] * 1000:8.2f} ms (median)")
    print(f"relay pass, {args.due:,} due among {args.settled + args.due:,} rows: {results['large'] * 1000:8.2f} ms")
    print(f"ratio {ratio:.2f} (target < {TARGET})" + ("" if ratio < TARGET else "  -- above target"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
