"""Two web machines and four workers on one database and one Redis, through a burst: every
invitation sent once, none twice, every row settled."""

from __future__ import annotations

import threading
from collections import Counter

import requests
import sqlalchemy as sa

from devtools.testing import wait_until
from tests.conftest import PASSWORD
from tests.ops.support import signed_in

FORMS = 12
PER_FORM = 5


def test_a_burst_through_two_masters_sends_each_invitation_once(deployment, make_user, outbox_rows, db):
    deployment.env["RESEND_RATE_LIMIT_PER_SECOND"] = "20"
    web_a = deployment.web("web-a")
    web_b = deployment.web("web-b")
    model = deployment.provider(webhook_url=f"{web_a}/webhooks/resend")
    for n in range(4):
        deployment.worker(f"worker-{n}")
    manager = make_user("manager", company="Acme Ltd")
    # One session works on both machines: they share SECRET_KEY, the session store is the cookie.
    browser = signed_in(web_a, manager, PASSWORD)

    forms = [[f"colleague{f}.{n}@acme.example" for n in range(PER_FORM)] for f in range(FORMS)]
    # A double submit that lands on both machines at the same moment, for half of the forms.
    posts = [(base, form) for i, form in enumerate(forms) for base in ((web_a, web_b) if i % 2 else (web_a,))]
    posts += [(web_b, form) for i, form in enumerate(forms) if i % 2 == 0]
    answers: list[int] = []
    start = threading.Barrier(len(posts))

    def post(base, form):
        start.wait()
        answer = browser.post(
            f"{base}/invitations/new",
            data={"emails": "\n".join(form), "programme": "language", "csrf_token": browser.csrf},
            allow_redirects=False,
        )
        answers.append(answer.status_code)

    threads = [threading.Thread(target=post, args=pair) for pair in posts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [302] * len(posts)

    addresses = {address for form in forms for address in form}
    assert wait_until(
        lambda: (
            len(outbox_rows()) == len(addresses)
            and all(row["status"] in ("sent", "delivered") for row in outbox_rows())
        ),
        timeout=120,
    ), Counter(row["status"] for row in outbox_rows())

    # The provider saw each idempotency key once (a form's addresses ride in one batch under one
    # key), and sent each person one email.
    keys = Counter(request["idempotency_key"] for request in model.requests())
    assert set(keys.values()) == {1}
    recipients = Counter(email["to"][0] for email in model.sent())
    assert set(recipients) == addresses and set(recipients.values()) == {1}
    with db.read() as conn:
        invitations = conn.execute(sa.text("SELECT email, COUNT(*) FROM invitations GROUP BY email")).all()
    assert {email for email, _ in invitations} == addresses and {n for _, n in invitations} == {1}

    # Both machines served the burst, and both say the four workers are there.
    for name, base in (("web-a", web_a), ("web-b", web_b)):
        assert "POST /invitations/new" in deployment.log_text(name)
        ready = requests.get(f"{base}/readyz", timeout=10)
        assert ready.status_code == 200 and ready.json()["checks"]["worker_heartbeat"]["live_workers"] == 4
