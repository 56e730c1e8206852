"""What the operator's console costs and how it scales (migration 0016).

    .venv/bin/python bench/outbox_console.py [--emails 2000] [--rows 1000000] [--pages 20]

1. The send path's state changes with the history triggers and the console's indexes, against the
   same changes on a database without them (both built from the migrations, the baseline then has
   the triggers and indexes dropped): commit an intent, record its publication, claim, record the
   first attempt, record acceptance, for --emails rows, one transaction each as the engine runs
   them, in alternating rounds. Prints the median ms per email of each and the ratio (target < 1.3).
2. A console page (newest first, dead letters only, and a keyset page deep in the list) on a table
   of --rows rows against the same pages on a table of 1,000 rows. Prints the median page time of
   each and the ratio (target < 3): a page is an index range, whatever the table's size. Then the
   time of the counts grid at the top of the console on the large table (no target: it counts
   every row).
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
SEND_TARGET, PAGE_TARGET = 1.3, 3.0
CONSOLE_OBJECTS = (
    "TRIGGER email_outbox_events_on_insert",
    "TRIGGER email_outbox_events_on_change",
    "TRIGGER email_outbox_events_on_erase",
    "INDEX email_outbox_console_created",
    "INDEX email_outbox_console_status",
    "INDEX email_outbox_console_family",
    "INDEX email_outbox_console_family_status",
)


def fresh_db(directory: Path, name: str):
    from portal.core import schema
    from portal.core.db import Database

    db = Database(f"sqlite+libsql:///{directory / name}")
    schema.upgrade(db)
    return db


def send_path(db, settings, emails: int) -> float:
    """Seconds per email for the engine's own statements along one successful send."""
    from portal.core import clock
    from portal.email_families import FAMILIES
    from portal.outbox import EmailIntent
    from portal.outbox.ground.rows import mark_sent, record_first_attempt, record_publication
    from portal.outbox.ground.statuses import ENQUEUED
    from portal.outbox.send.claims import claim_outbox_row
    from portal.outbox.write.intents import add_outbox_rows

    start = time.perf_counter()
    for n in range(emails):
        intent = EmailIntent(FAMILIES["notice"], f"p{n}@example.org", f"bench:{n}", {"subject": "s", "body": "b"})
        with db.write() as conn:
            (outbox_id,) = add_outbox_rows(conn, [intent], settings, now=clock.utcnow())
        record_publication(db, [outbox_id], ENQUEUED, None, now=clock.utcnow())
        claim_outbox_row(db, outbox_id, claim_seconds=300, now=clock.utcnow())
        with db.write() as conn:
            record_first_attempt(conn, outbox_id, now=clock.utcnow())
        mark_sent(db, outbox_id, f"re_{n}", now=clock.utcnow())
    return (time.perf_counter() - start) / emails


def fill(db, rows: int) -> None:
    """`rows` settled rows, one in 50 a dead letter, spread over a year."""
    import sqlalchemy as sa

    with db.write() as conn:
        conn.execute(
            sa.text(
                """
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < :count)
                INSERT INTO email_outbox (id, family, recipient, idempotency_key, status, template,
                    template_version, layout_version, template_input, environment, created_at, updated_at)
                SELECT printf('ntc_%032x', x), CASE x % 4 WHEN 0 THEN 'invitation' ELSE 'notice' END,
                       'p' || x || '@example.org', 'fill:' || x,
                       CASE WHEN x % 50 = 0 THEN 'dead_letter' ELSE 'delivered' END, 'notice', 1, 1, '{}',
                       'development', strftime('%Y-%m-%dT%H:%M:%f000Z', '2026-01-01', '+' || (x * 31) || ' seconds'),
                       '2026-01-01T00:00:00.000000Z'
                FROM n
                """
            ),
            {"count": rows},
        )


def page_times(db, pages: int) -> float:
    from portal.outbox.operate import listing

    filters = [
        listing.OutboxFilter(),
        listing.OutboxFilter(status="dead_letter"),
        listing.OutboxFilter(family="notice"),
    ]
    times = []
    for _ in range(pages):
        for f in filters:
            started = time.perf_counter()
            first = listing.outbox_page(db, f, None)
            listing.outbox_page(db, f, first.next_cursor)  # the second page, by key
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--emails", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args()

    from portal.core.settings import Settings

    settings = Settings(database_url="sqlite+libsql:///unused", redis_url="redis://unused", secret_key="bench")
    with tempfile.TemporaryDirectory() as directory:
        directory = Path(directory)
        with_console = fresh_db(directory, "with.db")
        baseline = fresh_db(directory, "without.db")
        with baseline.write() as conn:
            for kind_and_name in CONSOLE_OBJECTS:
                conn.exec_driver_sql(f"DROP {kind_and_name}")
        send_path(baseline, settings, 100)  # warm up both
        send_path(with_console, settings, 100)
        # Alternating rounds, medians: a shared machine's load shifts within a run.
        rounds = 5
        withouts, withs = [], []
        for _ in range(rounds):
            withouts.append(send_path(baseline, settings, args.emails // rounds))
            withs.append(send_path(with_console, settings, args.emails // rounds))
        without_s, with_s = statistics.median(withouts), statistics.median(withs)
        ratio = with_s / without_s
        print(f"send path: {with_s * 1000:.3f} ms/email with history and indexes, {without_s * 1000:.3f} without")
        print(f"  ratio {ratio:.2f} (target < {SEND_TARGET}){'' if ratio < SEND_TARGET else '  ABOVE TARGET'}")

        small, large = fresh_db(directory, "small.db"), fresh_db(directory, "large.db")
        fill(small, 1000)
        started = time.perf_counter()
        fill(large, args.rows)
        print(f"filled {args.rows} rows (with their history) in {time.perf_counter() - started:.1f} s")
        small_s, large_s = page_times(small, args.pages), page_times(large, args.pages)
        ratio = large_s / small_s
        print(f"console pages: {large_s * 1000:.2f} ms at {args.rows} rows, {small_s * 1000:.2f} ms at 1000")
        print(f"  ratio {ratio:.2f} (target < {PAGE_TARGET}){'' if ratio < PAGE_TARGET else '  ABOVE TARGET'}")
        from portal.outbox.operate.listing import family_status_counts

        started = time.perf_counter()
        family_status_counts(large)
        print(f"the counts grid (family x status) at {args.rows} rows: {(time.perf_counter() - started) * 1000:.0f} ms")
        for db in (with_console, baseline, small, large):
            db.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
