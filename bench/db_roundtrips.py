"""HTTP requests to a real libSQL server (sqld) per unit of work, counted by the server itself.

    .venv/bin/python bench/db_roundtrips.py

The portal reaches sqld through a counting proxy (devtools/counting_proxy.py); the bench counts the
requests each unit of work adds:
  email:    one notice from its committed intent to "accepted by the provider": its publication
            (rows written by `write_then_publish` are `enqueued` from the commit: no write), the
            read of its input to render, the claim with its frozen payload, the settle;
  batch100: 100 campaign rows published together and sent in one POST /emails/batch;
  invite20: a manager's POST inviting 20 colleagues, every request the POST makes: the web
            process's own reads (the signed-in user) and the write of the invitations with their
            emails and batch (checked: 20 rows in one batch, one message);
  report:   a manager's GET /reports of last quarter.
Each count is compared with the issue's goal in the same run (goal / measured: above 1 meets it).
Ends with: db round trips over sqld: email R1, batch100 R2, invite20 R3, report R4
"""

from __future__ import annotations

import re
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOALS = {"email": 3, "batch100": 6, "invite20": 6, "report": 10}  # issue 45's


def _notice(EmailIntent, families, name: str):
    return EmailIntent(
        family=families["notice"],
        recipient=f"{name}@roundtrips.example",
        idempotency_key=f"roundtrips:notice:{name}",
        data={"subject": name, "body": "Hello."},
    )


def main() -> int:
    import sqlalchemy as sa

    from devtools.counting_proxy import CountingProxy
    from devtools.provider_model import ProviderModel
    from devtools.sqld import JwtKeys, SqldServer
    from devtools.testing import PrivateRedis
    from portal import create_app
    from portal.auth.operations import create_user
    from portal.core import clock, schema
    from portal.core.db import Database
    from portal.core.settings import Settings
    from portal.email_families import FAMILIES
    from portal.outbox import EmailIntent
    from portal.outbox.ground.queues import BULK_EMAIL_QUEUE, EMAIL_QUEUE, queue_named
    from portal.outbox.send.consumer import handle_message, use_context
    from portal.outbox.write.intents import add_outbox_rows
    from portal.outbox.write.publish import publish_outbox_rows
    from portal.web.extensions import EXTENSION_KEY

    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="roundtrips-")))
        (tmp / "keys").mkdir()
        server = SqldServer(tmp / "data", JwtKeys(tmp / "keys")).start()
        stack.callback(server.stop)
        proxy = CountingProxy(server.port).start()
        stack.callback(proxy.stop)
        database_url = server.database_url().replace(f":{server.port}/", f":{proxy.port}/")
        redis = PrivateRedis().start()
        stack.callback(redis.stop)
        model = ProviderModel(port=0).start()
        stack.callback(model.stop)
        db = Database(database_url)
        stack.callback(db.dispose)
        schema.upgrade(db)
        manager = "manager@roundtrips.example"
        create_user(db, email=manager, password="correct-horse-battery", role="manager", company="Roundtrips AS")
        settings = Settings.from_env(
            {
                "DATABASE_URL": database_url,
                "REDIS_URL": redis.url,
                "SECRET_KEY": "bench-secret-key",
                "PORTAL_ENV": "development",
            },
            instance_path=tmp / "instance",
        ).with_overrides(resend_api_url=model.url, outbox_batch_size=100)
        app = create_app({"TESTING": True}, settings=settings)
        ctx = app.extensions[EXTENSION_KEY]
        stack.callback(ctx.db.dispose)
        use_context(ctx)

        def counted(work) -> int:
            before = proxy.requests()
            work()
            return proxy.requests() - before

        def write(intents) -> list[str]:
            with ctx.db.write() as conn:  # as write_then_publish writes them: its publication follows
                return add_outbox_rows(conn, intents, settings, now=clock.utcnow(), publishing=True)

        def deliver(ids, queue_name):
            def run():
                publish_outbox_rows(
                    ctx.db,
                    ctx.redis,
                    ids,
                    families=ctx.families,
                    batch_size=settings.outbox_batch_size,
                    now=clock.utcnow(),
                    recorded=True,
                )
                for job in queue_named(ctx.redis, queue_name).jobs:
                    decision = handle_message(ctx, job.args[0], attempt=1, dead_letter=False, now=clock.utcnow())
                    if not decision.startswith("ack"):
                        raise SystemExit(f"the send did not go through: {decision}")
                    job.delete()

            return run

        results = {}
        # One email first, uncounted: a worker's one-time checks (the frozen store's columns) are
        # not a cost of each email.
        deliver(write([_notice(EmailIntent, FAMILIES, "warm-up")]), EMAIL_QUEUE)()
        notice = write([_notice(EmailIntent, FAMILIES, "one")])
        results["email"] = counted(deliver(notice, EMAIL_QUEUE))
        campaign = write(
            [
                EmailIntent(
                    family=FAMILIES["campaign"],
                    recipient=f"reader{i}@roundtrips.example",
                    idempotency_key=f"roundtrips:campaign:{i}",
                    data={"user_id": i, "recipient_name": ""},
                    shared={"campaign_id": 1, "subject": "News", "body": "Hello."},
                )
                for i in range(100)
            ]
        )
        results["batch100"] = counted(deliver(campaign, BULK_EMAIL_QUEUE))
        if len(model.sent()) != 102:
            raise SystemExit(f"the provider model has {len(model.sent())} emails, expected 102")

        client = app.test_client()
        form = client.get("/login").get_data(as_text=True)
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', form).group(1)
        client.post("/login", data={"email": manager, "password": "correct-horse-battery", "csrf_token": token})
        page = client.get("/invitations/new").get_data(as_text=True)
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
        emails = "\n".join(f"colleague{i}@roundtrips.example" for i in range(20))

        def invite():
            answer = client.post(
                "/invitations/new", data={"emails": emails, "programme": "language", "csrf_token": token}
            )
            if answer.status_code != 302:
                raise SystemExit(f"the invitation POST answered {answer.status_code}")

        results["invite20"] = counted(invite)
        with db.read() as conn:
            invited = conn.execute(
                sa.text(
                    "SELECT COUNT(*), COUNT(DISTINCT batch_id), MIN(status), MAX(status) FROM email_outbox "
                    "WHERE family = 'invitation'"
                )
            ).one()
        messages = len(queue_named(ctx.redis, EMAIL_QUEUE).jobs)
        if tuple(invited) != (20, 1, "enqueued", "enqueued") or messages != 1:
            raise SystemExit(
                f"the invitation POST wrote {tuple(invited)} (rows, batches, statuses), {messages} messages"
            )
        results["report"] = counted(lambda: client.get("/reports?from=2026-07-01&to=2026-09-30&programme=all"))

    print(f"{'unit':<10} {'requests':>9} {'goal':>6} {'goal/measured':>14}")
    for unit, count in results.items():
        print(f"{unit:<10} {count:>9} {GOALS[unit]:>6} {GOALS[unit] / max(count, 1):>14.2f}")
    print(
        f"db round trips over sqld: email {results['email']}, batch100 {results['batch100']}, "
        f"invite20 {results['invite20']}, report {results['report']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
