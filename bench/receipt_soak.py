"""Soak: every accepted email ends with a receipt, a lookup's answer or an explained "no receipt".

--emails (1,000) notices are committed and sent by --workers real `python worker.py` processes (2)
through the provider model, whose receipts reach the portal's real webhook endpoint over HTTP;
the model drops the delivery receipt of a --dropped share (20%) of them (their recipients'
"noreceipt" local part: only `email.sent` comes, while the provider's own record says delivered),
and --bounces (5%) bounce. Then, instead of waiting 48 hours, the lookups' passes run at moved
moments (`now`), one every ten minutes of moved time from the acceptance to 48 hours on, as the
workers would run them; the provider keeps its records PROVIDER_LOG_RETENTION_DAYS (1). At 48
hours each accepted email is counted once: its final status from a webhook receipt, from a
lookup's answer, "no receipt" explained by what the lookups asked while the provider still knew
it, or unexplained (the goal: none). OUTBOX_LOOKUPS_PER_HOUR is raised for the soak: its budget
is a moving window of real hours, and the soak's 48 hours pass in seconds.
Loopback only; everything it starts is stopped.
Run: .venv/bin/python bench/receipt_soak.py [--emails 1000] [--dropped 0.2] [--bounces 0.05] [--workers 2]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import subprocess
import sys
import tempfile
import threading
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa
from werkzeug.serving import make_server

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.processes import stop_process  # noqa: E402
from devtools.provider_model import ProviderModel  # noqa: E402
from devtools.testing import PrivateRedis, process_env, start_workers, wait_until  # noqa: E402
from portal import create_app  # noqa: E402
from portal.context import build_context  # noqa: E402
from portal.core import clock, schema  # noqa: E402
from portal.core.settings import Settings  # noqa: E402
from portal.email_families import FAMILIES  # noqa: E402
from portal.outbox import EmailIntent, write_then_publish  # noqa: E402
from portal.outbox.hear.receipt_lookup import PASS_INTERVAL_SECONDS, look_up_missing_receipts  # noqa: E402
from portal.outbox.hear.reconciliation import past_provider_memory  # noqa: E402

SOAK_HOURS = 48
RATE = 50  # requests per second, the model's and the workers' alike: the soak is about receipts, not pace

# Each accepted email once, by how it ended (the first that applies).
_ENDINGS = sa.text(
    """
    SELECT
      CASE
        WHEN EXISTS (SELECT 1 FROM email_receipts r WHERE r.outbox_id = o.id AND r.source = 'lookup'
                       AND r.outcome = 'applied') THEN 'lookup'
        WHEN o.status != 'sent' THEN 'receipt'
        WHEN EXISTS (SELECT 1 FROM email_lookups l WHERE l.outbox_id = o.id) THEN 'explained'
        ELSE 'unexplained'
      END AS ending,
      COUNT(*)
    FROM email_outbox o WHERE o.provider_message_id IS NOT NULL GROUP BY ending
    """
)


def recipient(n: int, dropped: float, bounces: float) -> str:
    """Spread evenly: the n-th email's recipient, whose local part tells the model what to do."""
    if int((n + 1) * dropped) > int(n * dropped):
        return f"noreceipt.{n}@soak.example"
    if int((n + 1) * bounces) > int(n * bounces):
        return f"bounce.{n}@soak.example"
    return f"person.{n}@soak.example"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emails", type=int, default=1000)
    parser.add_argument("--dropped", type=float, default=0.2, help="share of emails whose delivery receipt never comes")
    parser.add_argument("--bounces", type=float, default=0.05)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-receipt-soak-"))
    redis_server = PrivateRedis().start()
    base = {
        "DATABASE_URL": f"sqlite+libsql:///{workdir / 'portal.db'}",
        "REDIS_URL": redis_server.url,
        "SECRET_KEY": "soak",
        "PORTAL_INSTANCE_PATH": str(workdir / "instance"),
        "RESEND_RATE_LIMIT_PER_SECOND": str(RATE),
        "OUTBOX_LOOKUPS_PER_HOUR": "1000000",
    }
    settings = Settings.from_env(base)
    app = create_app(settings=settings)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per receipt says nothing here
    web = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=web.serve_forever, name="soak-portal", daemon=True).start()
    model = ProviderModel(
        port=0,
        webhook_url=f"http://127.0.0.1:{web.server_port}/webhooks/resend",
        webhook_secret=settings.resend_webhook_secret,
        rate_limit_per_second=RATE,
    ).start()
    settings = settings.with_overrides(resend_api_url=model.url)
    ctx = build_context(settings)
    workers: list[subprocess.Popen] = []
    try:
        schema.upgrade(ctx.db)
        env = process_env(settings, workdir / "worker-instance", RESEND_API_URL=model.url, **base)
        workers = start_workers(env, args.workers)
        print(
            f"sending {args.emails} notices: {args.dropped:.0%} without a delivery receipt, {args.bounces:.0%} bounce…"
        )
        notice = FAMILIES["notice"]
        for start in range(0, args.emails, 100):
            with write_then_publish(ctx, now=clock.utcnow()) as work:
                work.add(
                    *(
                        EmailIntent(
                            notice,
                            recipient(n, args.dropped, args.bounces),
                            f"soak:{n}",
                            {"subject": "Soak", "body": f"Email {n}."},
                        )
                        for n in range(start, min(start + 100, args.emails))
                    )
                )

        def accepted() -> int:
            with ctx.db.read() as conn:
                return conn.execute(
                    sa.text("SELECT COUNT(*) FROM email_outbox WHERE provider_message_id IS NOT NULL")
                ).scalar_one()

        if not wait_until(lambda: accepted() == args.emails, timeout=600, interval=0.5):
            raise SystemExit(f"only {accepted()} of {args.emails} emails were accepted")
        model.wait_for_receipts(timeout=300)
        with ctx.db.read() as conn:
            last_accepted = clock.parse(conn.execute(sa.text("SELECT MAX(sent_at) FROM email_outbox")).scalar_one())
            before = dict(conn.execute(_ENDINGS).all())
        print(f"  all accepted; receipts received; before any lookup: {before}")

        # The lookups' passes, every ten minutes of moved time, until 48 hours after the last acceptance.
        moment, passes, asked, learned = last_accepted, 0, 0, 0
        while moment < last_accepted + timedelta(hours=SOAK_HOURS):
            moment += timedelta(seconds=PASS_INTERVAL_SECONDS)
            result = look_up_missing_receipts(ctx, now=moment)
            passes, asked, learned = passes + 1, asked + result.asked, learned + result.learned
            if result.stopped:
                print(f"  pass at +{(moment - last_accepted) / timedelta(hours=1):.1f} h stopped: {result.stopped}")
        with ctx.db.read() as conn:
            endings = dict(conn.execute(_ENDINGS).all())
        forgotten = past_provider_memory(ctx.db, retention_days=settings.provider_log_retention_days, now=moment)
    finally:
        for worker in workers:
            stop_process(worker)
        ctx.db.dispose()
        model.stop()
        web.shutdown()
        redis_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    total = sum(endings.values())
    print(
        f"  {passes} lookup passes over {SOAK_HOURS} moved hours (OUTBOX_NO_RECEIPT_HOURS "
        f"{settings.outbox_no_receipt_hours}, the provider's memory {settings.provider_log_retention_days * 24} h): "
        f"{asked} asked, {learned} receipts learned; past the provider's memory without a final status: {forgotten}"
    )
    print(
        f"soak {total} accepted emails at +{SOAK_HOURS} h: {endings.get('receipt', 0)} with a receipt, "
        f"{endings.get('lookup', 0)} by a lookup's answer, {endings.get('explained', 0)} explained no receipt, "
        f"{endings.get('unexplained', 0)} unexplained (goal 0: {'met' if not endings.get('unexplained') else 'missed'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
