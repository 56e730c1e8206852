"""The article's lost emails were test sends and backfills that reached the queue, were acknowledged
and never sent. Here both go through real `python worker.py` processes and the provider model."""

import re
from collections import Counter

from portal.auth.queries import load_user
from portal.invitations.operations import invite_colleagues
from portal.outbox.ground.statuses import ENQUEUED, SENT


def test_each_test_send_and_backfill_is_accepted_exactly_once(
    client, auth, runner, company, subscribe, report_rows, drain_workers, provider_model
):
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "monthly", since="2026-11-20T00:00:00.000000Z")
    auth.login(manager)
    for _ in range(2):  # two test sends: two emails
        page = client.get("/reports/subscription").get_data(as_text=True)
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
        request_id = re.search(r'name="request_id" type="hidden" value="([0-9a-f]{32})"', page).group(1)
        assert (
            client.post("/reports/test-send", data={"csrf_token": token, "request_id": request_id}).status_code == 302
        )
    for period in ("2026-09", "2026-10"):  # two backfills
        result = runner.invoke(args=["reports", "backfill", "--company", "Acme Ltd", "--period", period])
        assert result.exit_code == 0, result.output

    drain_workers()

    rows = report_rows()
    assert len(rows) == 4
    assert not [r for r in rows if r["status"] == ENQUEUED and r["attempt_count"] == 0], "nothing acknowledged unsent"
    assert {r["status"] for r in rows} == {SENT}
    # The provider sees each row's key ("<environment>:<install id>:<row ID>") accepted once.
    accepted = Counter(email["idempotency_key"].split(":", 2)[2] for email in provider_model.sent())
    assert accepted == Counter({r["id"]: 1 for r in rows})
    assert all(len(email["attachments"]) == 1 for email in provider_model.sent())


def test_report_emails_wait_for_an_invitation_committed_after_them(
    ctx, runner, company, subscribe, user_id, report_rows, drain_workers, provider_model
):
    """A month's reports are thousands of single requests (a PDF each: Resend's batch endpoint takes
    no attachments), minutes at the provider's limit. They go to the bulk queue, which workers take
    only when the transactional one is empty, so an invitation committed after them goes first."""
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "monthly", since="2026-06-20T00:00:00.000000Z")
    for period in ("2026-07", "2026-08", "2026-09", "2026-10"):
        result = runner.invoke(args=["reports", "backfill", "--company", "Acme Ltd", "--period", period])
        assert result.exit_code == 0, result.output
    invite_colleagues(
        ctx, manager=load_user(ctx.db, user_id(manager)), addresses=["new@acme.example"], programme="language"
    )

    drain_workers()

    assert {r["status"] for r in report_rows()} == {SENT}
    sent = [email["to"][0] for email in provider_model.sent()]
    assert len(sent) == 5 and sent[0] == "new@acme.example", sent
