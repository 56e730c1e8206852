"""Benchmark: one pass of the report schedule over 2,000 companies with 2 subscribed managers each.

The pass reads each company's figures for the closed month, writes its run row and 2 email intents
in one transaction, and publishes them: 4,000 intents. The baseline, measured in the same run on the
same database, writes the same 4,000 intents bare (the same template input, one transaction per
company through write_then_publish, then publication), without figures or run rows. Prints the time
per company for both and the ratio (target < 3), then the PDF time per report (rendering an email
with its PDF attachment, as the worker does before freezing it).
Three rounds (October, November and December closing), each pass then its baseline; the median ratio is
the figure. Run: .venv/bin/python bench/report_run.py [--companies 2000] [--pdfs 20]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.testing import PrivateRedis  # noqa: E402
from portal.context import build_context  # noqa: E402
from portal.core import clock, schema  # noqa: E402
from portal.core.clock import iso  # noqa: E402
from portal.core.settings import Settings  # noqa: E402
from portal.outbox import EmailIntent, write_then_publish  # noqa: E402
from portal.report_emails.emails import REPORT  # noqa: E402
from portal.report_emails.operations import run_due  # noqa: E402

# Each round's pass runs the morning after a month closed in Oslo: October, November, December.
ROUNDS = (
    datetime(2026, 11, 2, 6, tzinfo=UTC),
    datetime(2026, 12, 2, 6, tzinfo=UTC),
    datetime(2027, 1, 2, 6, tzinfo=UTC),
)
SINCE = "2026-10-15T00:00:00.000000Z"


def seed(db, companies: int, volunteers: int) -> None:
    """Companies, 2 managers and `volunteers` employees each with October sessions, written in bulk SQL."""
    started = iso(ROUNDS[0] - timedelta(days=400))
    with db.write() as conn:
        conn.execute(
            sa.text("INSERT INTO companies (id, name, name_key) VALUES (:id, :name, :key)"),
            [{"id": c, "name": f"Company {c}", "key": f"company {c}"} for c in range(1, companies + 1)],
        )
        users, sessions, uid = [], [], 0
        for c in range(1, companies + 1):
            for m in range(2):
                uid += 1
                users.append({"id": uid, "email": f"m{m}@c{c}.example", "role": "manager", "c": c})
            for v in range(volunteers):
                uid += 1
                users.append({"id": uid, "email": f"v{v}@c{c}.example", "role": "employee", "c": c})
                for month in (10, 11, 12):
                    for s in range(2):
                        held = iso(datetime(2026, month, 5 + 7 * s, 16, tzinfo=UTC))
                        sessions.append(
                            {"sid": f"{uid}-{month}-{s}", "email": f"v{v}@c{c}.example", "u": uid, "c": c, "h": held}
                        )
        conn.execute(
            sa.text(
                "INSERT INTO users (id, email, name, password_hash, role, company_id) "
                "VALUES (:id, :email, '', 'x', :role, :c)"
            ),
            users,
        )
        conn.execute(
            sa.text("INSERT INTO company_memberships (user_id, company_id, started_at) VALUES (:id, :c, :s)"),
            [{"id": u["id"], "c": u["c"], "s": started} for u in users],
        )
        conn.execute(
            sa.text(
                "INSERT INTO attendance_sessions (platform, session_id, volunteer_email, user_id, company_id, held_at, "
                "minutes, status, updated_at, received_at, source) "
                "VALUES ('language', :sid, :email, :u, :c, :h, 60, 'attended', :h, :h, 'api')"
            ),
            sessions,
        )
        conn.execute(
            sa.text(
                "INSERT INTO report_subscriptions (user_id, company_id, frequency, since, updated_at) "
                "VALUES (:id, :c, 'monthly', :s, :s)"
            ),
            [{"id": u["id"], "c": u["c"], "s": SINCE} for u in users if u["role"] == "manager"],
        )


def bare_intents(ctx, companies: int, template_input: dict, round_number: int) -> float:
    """The same intents, written as plain outbox rows: one write_then_publish per company."""
    started = time.perf_counter()
    for c in range(1, companies + 1):
        with write_then_publish(ctx, now=clock.utcnow()) as work:
            work.add(
                *(
                    EmailIntent(
                        REPORT, f"m{m}@c{c}.example", f"bare:{round_number}:{c}:{m}", template_input, f"bare:{c}"
                    )
                    for m in range(2)
                )
            )
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", type=int, default=2000)
    parser.add_argument("--volunteers", type=int, default=3, help="employees with October sessions per company")
    parser.add_argument("--pdfs", type=int, default=20)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-report-run-"))
    redis_server = PrivateRedis().start()
    settings = Settings.from_env(
        {"DATABASE_URL": f"sqlite+libsql:///{workdir / 'portal.db'}", "REDIS_URL": redis_server.url, "SECRET_KEY": "b"},
        instance_path=workdir / "instance",
    )
    ctx = build_context(settings)
    try:
        schema.upgrade(ctx.db)
        print(f"seeding {args.companies} companies, 2 subscribed managers and {args.volunteers} volunteers each…")
        seed(ctx.db, args.companies, args.volunteers)

        ratios, pass_times, bare_times = [], [], []
        for number, now in enumerate(ROUNDS, 1):
            print(f"round {number}: one scheduler pass, then the same intents bare…")
            started = time.perf_counter()
            report = run_due(ctx, now=now)
            pass_times.append(time.perf_counter() - started)
            if report.emails != 2 * args.companies:
                raise SystemExit(f"the pass wrote {report.emails} intents, expected {2 * args.companies}")
            with ctx.db.read() as conn:
                stored = conn.execute(
                    sa.text("SELECT template_input FROM email_outbox WHERE family = 'report' LIMIT :n"),
                    {"n": max(args.pdfs, 1)},
                ).scalars()
                inputs = [json.loads(text) for text in stored]
            bare_times.append(bare_intents(ctx, args.companies, inputs[0], number))
            ratios.append(pass_times[-1] / bare_times[-1])

        print(f"rendering {len(inputs)} report emails with their PDF…")
        pdf_times = []
        for data in inputs:
            started = time.perf_counter()
            rendered = REPORT.render(data, settings, now=clock.utcnow())
            pdf_times.append(time.perf_counter() - started)
            assert rendered.attachments and rendered.attachments[0].content_type == "application/pdf"
    finally:
        ctx.db.dispose()
        redis_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    per_company = statistics.median(pass_times) / args.companies
    bare_per_company = statistics.median(bare_times) / args.companies
    print(
        f"\n  scheduler pass ({2 * args.companies} intents a round): {per_company * 1000:.2f} ms per company (median of {len(ROUNDS)} rounds)"
    )
    print(f"  the same intents bare: {bare_per_company * 1000:.2f} ms per company")
    print(
        f"  ratio pass/bare: median {statistics.median(ratios):.2f}, rounds "
        + ", ".join(f"{r:.2f}" for r in ratios)
        + "   (target < 3)"
    )
    print(
        f"  PDF per report (render with attachment): p50 {statistics.median(pdf_times) * 1000:.0f} ms, "
        f"max {max(pdf_times) * 1000:.0f} ms over {len(pdf_times)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
