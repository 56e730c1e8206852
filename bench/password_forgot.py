"""Benchmark: does the forgot-password answer take longer for an address that has an account?

Posts the form through the app (Flask's test client, the limiter off: the limit is not what is
measured) for known and unknown addresses in alternation, each address once (a second request for
an address within the hour takes another path), and prints both
distributions (median, p10, p90) and the ratio of the medians; a ratio near 1.00 says the timing
does not tell a stranger who has an account. Everything runs in a temporary directory.
Run: .venv/bin/python bench/password_forgot.py [--rounds 400]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.testing import PrivateRedis  # noqa: E402
from portal import create_app  # noqa: E402
from portal.core import schema  # noqa: E402
from portal.core.db import Database  # noqa: E402
from portal.core.settings import Settings  # noqa: E402
from portal.seed import seed_demo  # noqa: E402

KNOWN, UNKNOWN = "known", "unknown"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args()
    redis = PrivateRedis().start()
    try:
        with tempfile.TemporaryDirectory(prefix="portal-bench-") as tmp:
            url = f"sqlite+libsql:///{tmp}/bench.db"
            db = Database(url)
            schema.upgrade(db)
            seed_demo(db, secret_key="bench", attendance=False)  # nothing is erased here: any key will do
            rounds = args.rounds + 20
            with db.write() as conn:  # accounts to ask about, one per round, sharing one password hash
                conn.execute(
                    sa.text(
                        "INSERT INTO users (email, name, password_hash, role, company_id) "
                        "SELECT 'known-' || value || '@bench.example', 'Bench', u.password_hash, 'employee', "
                        "u.company_id FROM generate_series(1, :n), users u WHERE u.role = 'manager' LIMIT :n"
                    ),
                    {"n": rounds},
                )
            db.dispose()
            settings = Settings.from_env({"DATABASE_URL": url, "REDIS_URL": redis.url}, instance_path=Path(tmp))
            app = create_app(
                {"TESTING": True, "RATELIMIT_ENABLED": False, "WTF_CSRF_ENABLED": False}, settings=settings
            )
            client = app.test_client()
            timings: dict[str, list[float]] = {KNOWN: [], UNKNOWN: []}
            for round_ in range(rounds):
                for kind in (KNOWN, UNKNOWN) if round_ % 2 else (UNKNOWN, KNOWN):
                    address = f"{kind}-{round_ + 1}@bench.example"
                    started = time.perf_counter()
                    answer = client.post("/password/forgot", data={"email": address})
                    elapsed = time.perf_counter() - started
                    if answer.status_code != 302:
                        raise SystemExit(f"the form answered {answer.status_code}")
                    if round_ >= 20:  # the first rounds warm caches and connections
                        timings[kind].append(elapsed * 1000)
            for label, kind in (("known address", KNOWN), ("unknown address", UNKNOWN)):
                values = timings[kind]
                print(
                    f"{label:16} median {statistics.median(values):.2f} ms, p10 {percentile(values, 0.1):.2f} ms, "
                    f"p90 {percentile(values, 0.9):.2f} ms ({len(values)} posts)"
                )
            ratio = statistics.median(timings[KNOWN]) / statistics.median(timings[UNKNOWN])
            print(f"password forgot: known/unknown median ratio {ratio:.2f}")
    finally:
        redis.stop()


if __name__ == "__main__":
    main()
