"""Benchmark: the year's report page for a large company, its drill-down list, and the memory of
the exports and the filing pack.

Builds a temporary libSQL file from migrations/: one company with --colleagues employees and --rows
attendance rows over three years (2024-2026), written with executemany in batches. Then, in one run:
- p50 of GET /reports for the year 2025 (every figure a link to its records) through the Flask test
  client, signed in as the manager, against the same SQL statements run bare (no Python assembly, no
  template): target ratio < 3 (and p50 < 300 ms at the default size);
- p50 of the drill-down list of the page's largest figure (the year's hours, every record of the year,
  first page) against its own statements run bare: target ratio < 3;
- in child processes, the peak RSS of streaming a 100,000-row XLSX export, and of the year's JSON
  filing pack against a one-month pack (flat: the pack is written a data point at a time);
- one summary line per target at the end.
Run: .venv/bin/python bench/report.py [--rows 1000000] [--colleagues 5000] [--runs 7]
The issue's size: --rows 10000000 --colleagues 50000 (run alone: the build takes half an hour; with
--keep FILE it is kept, and --database FILE measures on it again without building).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.testing import PrivateRedis  # noqa: E402
from portal.auth.operations import create_user, hash_password  # noqa: E402
from portal.core import schema  # noqa: E402
from portal.core.clock import iso  # noqa: E402
from portal.core.db import Database  # noqa: E402

PASSWORD = "bench-password-1"
MANAGER = "manager@bench.example"
YEAR = {"from": "2025-01-01", "to": "2025-12-31", "programme": "all"}
XLSX_RANGE = {"from": "2025-01-01", "to": "2025-05-09", "programme": "all"}  # ~100,000 sessions
XLSX_SMALL = {"from": "2025-01-01", "to": "2025-01-13", "programme": "all"}  # ~10,000: same memory if constant
PACK_LARGE = YEAR  # the year's filing: a third of the rows
PACK_SMALL = {"from": "2025-01-01", "to": "2025-01-31", "programme": "all"}  # a month's filing


def build(db: Database, rows: int, employees: int) -> int:
    schema.upgrade(db)
    create_user(db, email=MANAGER, password=PASSWORD, role="manager", company="Bench Industries")
    with db.read() as conn:
        company_id = conn.exec_driver_sql("SELECT company_id FROM users WHERE email = ?", (MANAGER,)).scalar()
    password_hash = hash_password("not-used-by-the-bench")
    with db.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO users (email, name, password_hash, role, company_id, programme) VALUES (?, ?, ?, 'employee', ?, ?)",
            [
                (
                    f"e{n}@bench.example",
                    f"Employee {n:04d}",
                    password_hash,
                    company_id,
                    "language" if n % 3 else "mentorship",
                )
                for n in range(employees)
            ],
        )
        conn.exec_driver_sql(
            "INSERT INTO company_memberships (user_id, company_id, started_at) "
            "SELECT id, company_id, '2023-06-01T00:00:00.000000Z' FROM users WHERE role = 'employee'"
        )
        people = conn.exec_driver_sql("SELECT id, email, programme FROM users WHERE role = 'employee'").all()
    rng = random.Random(42)
    start = datetime(2023, 12, 31, 23, tzinfo=UTC)  # 1 Jan 2024 in Oslo
    span = int((datetime(2026, 12, 31, 23, tzinfo=UTC) - start).total_seconds() // 60)
    statuses = ["attended"] * 17 + ["cancelled", "no_show", "cancelled"]
    batch = 50_000
    for first in range(0, rows, batch):
        values = []
        for n in range(first, min(first + batch, rows)):
            user_id, email, programme = people[rng.randrange(len(people))]
            held = iso(start + timedelta(minutes=rng.randrange(span)))
            values.append(
                (
                    programme,
                    f"s{n}",
                    email,
                    user_id,
                    company_id,
                    held,
                    rng.choice((30, 45, 60, 60, 90)),
                    rng.choice(statuses),
                    held,
                    held,
                    "api",
                    int(rng.random() < 0.1),  # one session in ten in the volunteer's own time
                )
            )
        with db.write() as conn:
            conn.exec_driver_sql(
                "INSERT INTO attendance_sessions (platform, session_id, volunteer_email, user_id, company_id, held_at, "
                "minutes, status, updated_at, received_at, source, own_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
    with db.write() as conn:
        # A third of the colleagues chose to count their own time; one in ten of those changed their mind
        # later (their latest choice counts), so the own-time rule reads real choices.
        choices = [(user_id, 1, "2024-03-01T00:00:00.000000Z") for user_id, _e, _p in people[::3]]
        choices += [(user_id, 0, "2025-03-01T00:00:00.000000Z") for user_id, _e, _p in people[::30]]
        conn.exec_driver_sql("INSERT INTO own_time_choices (user_id, counted, chosen_at) VALUES (?, ?, ?)", choices)
        conn.exec_driver_sql(
            "INSERT INTO company_goals (company_id, year_start, hours, participation, updated_by, updated_at) "
            "SELECT ?, '2025-01-01', '600000', '40', id, '2025-01-02T00:00:00.000000Z' FROM users WHERE email = ?",
            (company_id, MANAGER),
        )
        conn.exec_driver_sql("ANALYZE")
    return company_id


def signed_in_client(app):
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    client.post("/login", data={"email": MANAGER, "password": PASSWORD, "csrf_token": token})
    return client


def figure_statements(company_id: int, period) -> list:
    """The statements that read one period's figures (figures.read_figures), with their values."""
    from zoneinfo import ZoneInfo

    from portal.core.driver import Statement
    from portal.reports.figures import EMPLOYEES_IN_PERIOD, MONTH_SUMS, OWN_TIME_VOLUNTEERS, per_volunteer_sql

    tz = ZoneInfo("Europe/Oslo")
    months = [m.utc_bounds(tz) for m in period.months()]
    start, end = months[0][0], months[-1][1]
    params = {
        "company_id": company_id,
        "start": start,
        "end": end,
        "programmes": '["language", "mentorship"]',
        **{f"b{i}": months[i][0] for i in range(1, len(months))},
    }
    per_volunteer = Statement(per_volunteer_sql(len(months), members_only=True).text)
    month_sums, employees = Statement(MONTH_SUMS.text), Statement(EMPLOYEES_IN_PERIOD.text)
    return [
        (per_volunteer, params),
        (month_sums, {"company_id": company_id, "months": json.dumps(months)}),
        (employees, params),
        (Statement(OWN_TIME_VOLUNTEERS.text), params),
    ]


def time_bare(db: Database, company_id: int, runs: int) -> list[float]:
    """The same statements the page runs, straight to the driver: no Python assembly, no template."""
    from datetime import date

    from portal.core.periods import Period

    statements = figure_statements(company_id, Period(date(2025, 1, 1), date(2025, 12, 31), ""))
    statements += extra_bare_statements(company_id)
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        with db.read() as conn:
            for statement, values in statements:
                statement(conn, values).all()
        timings.append(time.perf_counter() - started)
    return timings


def extra_bare_statements(company_id: int) -> list:
    """The page's statements besides the year's figures (issue 50, item 1): the year's goal, and the
    same figures for the same period last year."""
    from datetime import date

    from portal.core.driver import Statement
    from portal.core.periods import Period
    from portal.reports.goals import GOAL_OF

    goal = (Statement(GOAL_OF.text), {"company_id": company_id, "year": "2025-01-01"})
    return [goal, *figure_statements(company_id, Period(date(2024, 1, 1), date(2024, 12, 31), ""))]


def time_drill(client, db: Database, company_id: int, runs: int) -> tuple[list[float], list[float], str]:
    """The drill-down list of the page's largest figure (the year's hours: every record of the year),
    its first page through the app, and its own statements run bare."""
    from datetime import date
    from zoneinfo import ZoneInfo

    from portal.core.driver import Statement
    from portal.core.periods import Period
    from portal.reports.queries import CLOSURE_COVERING, drill_page_sql, drill_totals_sql, drill_where
    from portal.reports.selection import Drill, ReportQuery
    from portal.web.paging import limits

    tz = ZoneInfo("Europe/Oslo")
    period = Period(date(2025, 1, 1), date(2025, 12, 31), "")
    where, extra = drill_where(Drill(ReportQuery(period, "all")))
    start, end = period.utc_bounds(tz)
    params = {"company_id": company_id, "start": start, "end": end, "programmes": '["language", "mentorship"]'}
    totals, page = Statement(drill_totals_sql(where).text), Statement(drill_page_sql(where).text)
    closure = Statement(CLOSURE_COVERING.text)
    closure_params = {"company_id": company_id, "start": "2025-01-01", "end": "2025-12-31"}
    bare = []
    for _ in range(runs):
        started = time.perf_counter()
        with db.read() as conn:
            totals(conn, {**params, **extra}).all()
            page(conn, {**params, **extra, **limits(1, 100)}).all()
            closure(conn, closure_params).all()
        bare.append(time.perf_counter() - started)
    href = re.search(
        r'href="(/reports/sessions\?[^"]+)" id="figure-hours"',
        client.get("/reports", query_string=YEAR).get_data(as_text=True),
    )
    url = href.group(1).replace("&amp;", "&")
    assert client.get(url).status_code == 200  # warm
    served = []
    for _ in range(runs):
        began = time.perf_counter()
        response = client.get(url)
        served.append(time.perf_counter() - began)
        assert response.status_code == 200
    listed = re.search(r'id="drill-hours">([^<]+)<', response.get_data(as_text=True)).group(1)
    return served, bare, listed


def status_kib(field: str) -> int:
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field + ":"))


# What a child process downloads, by kind: the route, the small and large query, and which of the
# period's attendance rows it counts (the XLSX lists attended sessions; the pack reads every row).
DOWNLOADS = {
    "xlsx": ("/reports/export.xlsx", XLSX_SMALL, XLSX_RANGE, " AND status = 'attended'"),
    "pack": ("/reports/filing.json", PACK_SMALL, PACK_LARGE, ""),
}


def download_child(kind: str, database_url: str, redis_url: str, instance: str, which: str) -> None:
    """Runs in its own process: RSS before and at the peak of one streamed download (DOWNLOADS)."""
    from datetime import date
    from zoneinfo import ZoneInfo

    from portal import create_app
    from portal.core.periods import Period
    from portal.core.settings import Settings

    path, small, large, counted = DOWNLOADS[kind]
    settings = Settings.from_env(
        {"DATABASE_URL": database_url, "REDIS_URL": redis_url, "SECRET_KEY": "bench"}, instance_path=Path(instance)
    )
    app = create_app({"TESTING": True}, settings=settings)
    client = signed_in_client(app)
    wanted = large if which == "large" else small
    # Signing in hashes with argon2 (64 MiB): reset the high-water mark so the peak is the download's.
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    before = status_kib("VmRSS")
    started = time.perf_counter()
    response = client.get(path, query_string=wanted, buffered=False)
    size = sum(len(chunk) for chunk in response.response)
    seconds = time.perf_counter() - started
    bounds = Period(date.fromisoformat(wanted["from"]), date.fromisoformat(wanted["to"]), "").utc_bounds(
        ZoneInfo("Europe/Oslo")
    )
    with app.extensions["portal"].db.read() as conn:
        count = conn.exec_driver_sql(
            f"SELECT COUNT(*) FROM attendance_sessions WHERE held_at >= ? AND held_at < ?{counted}", bounds
        ).scalar()
    print(
        json.dumps(
            {
                "before_kib": before,
                "peak_kib": status_kib("VmHWM"),
                "bytes": size,
                "seconds": seconds,
                "rows": count,
                "status": response.status_code,
            }
        )
    )


def child(kind: str, database_url: str, redis_url: str, instance: str, which: str) -> dict:
    found = subprocess.run(
        [sys.executable, __file__, "--child", kind, database_url, redis_url, instance, which],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if found.returncode != 0:
        raise SystemExit(found.stderr[-2000:])
    return json.loads(found.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--colleagues", "--employees", dest="employees", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--database",
        type=Path,
        help="measure on a database an earlier run built and kept (--keep): the build of 10M rows takes half an hour",
    )
    parser.add_argument("--keep", type=Path, help="build into this new file and keep it (for --database later)")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        download_child(*args.child)
        return 0

    from portal import create_app
    from portal.core.settings import Settings

    workdir = Path(tempfile.mkdtemp(prefix="bench-report-"))
    if args.keep and args.keep.exists():
        raise SystemExit(f"{args.keep} exists: --keep builds a new file (measure on it with --database)")
    path = args.database or args.keep or workdir / "portal.db"
    database_url = f"sqlite+libsql:///{path}"
    redis_server = PrivateRedis().start()
    db = Database(database_url)
    try:
        if args.database:
            with db.read() as conn:
                company_id = conn.exec_driver_sql("SELECT company_id FROM users WHERE email = ?", (MANAGER,)).scalar()
                rows = conn.exec_driver_sql("SELECT COUNT(*) FROM attendance_sessions").scalar()
                employees = conn.exec_driver_sql("SELECT COUNT(*) FROM users WHERE role = 'employee'").scalar()
            # A kept database holds the filings its last run made: the pack children file afresh.
            with db.write() as conn:
                conn.exec_driver_sql("DELETE FROM filing_releases")
            print(f"measured on {path}: {rows:,} attendance rows for {employees:,} employees, built earlier")
        else:
            started = time.perf_counter()
            company_id = build(db, args.rows, args.employees)
            print(
                f"built {args.rows:,} attendance rows for {args.employees:,} employees in "
                f"{time.perf_counter() - started:.0f} s"
            )
        settings = Settings.from_env(
            {"DATABASE_URL": database_url, "REDIS_URL": redis_server.url, "SECRET_KEY": "bench"},
            instance_path=workdir / "instance",
        )
        app = create_app({"TESTING": True}, settings=settings)
        client = signed_in_client(app)
        assert client.get("/reports", query_string=YEAR).status_code == 200  # warm
        page_times = []
        for _ in range(args.runs):
            began = time.perf_counter()
            response = client.get("/reports", query_string=YEAR)
            page_times.append(time.perf_counter() - began)
            assert response.status_code == 200
        hours = re.search(r'id="figure-hours">([^<]+)<', response.get_data(as_text=True)).group(1)
        bare_times = time_bare(db, company_id, args.runs)
        drill_times, drill_bare, drill_hours = time_drill(client, db, company_id, args.runs)
        where = (database_url, redis_server.url, str(workdir / "instance"))
        xlsx = {which: child("xlsx", *where, which) for which in ("small", "large")}
        packs = {which: child("pack", *where, which) for which in ("small", "large")}
    finally:
        db.dispose()
        redis_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    page_p50, bare_p50 = statistics.median(page_times), statistics.median(bare_times)
    drill_p50, drill_bare_p50 = statistics.median(drill_times), statistics.median(drill_bare)

    def runs_text(times) -> str:
        return ", ".join(f"{t * 1000:.0f}" for t in times)

    print(f"\n  report page, year 2025 ({hours} h): p50 {page_p50 * 1000:7.1f} ms  (runs: {runs_text(page_times)})")
    print(f"  bare SQL aggregate, same figures:  p50 {bare_p50 * 1000:7.1f} ms  (runs: {runs_text(bare_times)})")
    print(
        f"  drill-down of the year's hours ({drill_hours} h), first page: p50 {drill_p50 * 1000:7.1f} ms  "
        f"(runs: {runs_text(drill_times)})"
    )
    print(
        f"  bare SQL, the same list's statements: p50 {drill_bare_p50 * 1000:7.1f} ms  (runs: {runs_text(drill_bare)})"
    )
    for run in (xlsx["small"], xlsx["large"]):
        print(
            f"  XLSX of {run['rows']:,} sessions: {run['bytes'] / 1e6:.1f} MB in {run['seconds']:.1f} s; "
            f"peak RSS {run['peak_kib'] / 1024:.0f} MiB (signed in, before the export: "
            f"{run['before_kib'] / 1024:.0f} MiB, +{(run['peak_kib'] - run['before_kib']) / 1024:.0f} MiB)"
        )
    for name, run in (("month", packs["small"]), ("year", packs["large"])):
        print(
            f"  JSON filing pack, the {name} ({run['rows']:,} attendance rows): {run['bytes'] / 1e3:.1f} kB in "
            f"{run['seconds']:.1f} s; peak RSS {run['peak_kib'] / 1024:.0f} MiB "
            f"(+{(run['peak_kib'] - run['before_kib']) / 1024:.0f} MiB)"
        )
    grew = [(r["peak_kib"] - r["before_kib"]) / 1024 for r in (packs["small"], packs["large"])]
    # Flat: the year's pack (its rows many times the month's) grows the process by at most 16 MiB or
    # a quarter more than the month's.
    flat = grew[1] <= max(grew[0] * 1.25, grew[0] + 16)
    print("\nsummary")
    print(
        f"  report page within 3 x bare SQL: {page_p50 / bare_p50:.2f} x "
        f"({page_p50 * 1000:.0f} / {bare_p50 * 1000:.0f} ms): {'met' if page_p50 < 3 * bare_p50 else 'MISSED'}"
    )
    print(
        f"  drill-down list within 3 x its bare query: {drill_p50 / drill_bare_p50:.2f} x "
        f"({drill_p50 * 1000:.0f} / {drill_bare_p50 * 1000:.0f} ms): "
        f"{'met' if drill_p50 < 3 * drill_bare_p50 else 'MISSED'}"
    )
    print(
        f"  JSON pack memory flat, year ({packs['large']['rows']:,} rows) against month ({packs['small']['rows']:,}): "
        f"+{grew[1]:.0f} MiB against +{grew[0]:.0f} MiB: {'met' if flat else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
