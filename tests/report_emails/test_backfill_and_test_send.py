"""Backfills (`flask reports backfill`) and test sends (`POST /reports/test-send`): explicit, recorded,
never doubled by accident, and refused with a clear message that changes nothing."""

import json
import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core import clock
from portal.core.periods import Period
from portal.report_emails.operations import backfill
from portal.reports.operations import close_year
from tests.reports.conftest import Row, oslo


def run_rows(db):
    with db.read() as conn:
        return [
            dict(r)
            for r in conn.execute(
                sa.text(
                    "SELECT period_key, run_number, trigger, requested_by, figures_source FROM report_runs ORDER BY id"
                )
            ).mappings()
        ]


def test_backfill_is_recorded_and_a_second_one_is_refused_unless_forced(runner, db, company, subscribe, report_rows):
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "monthly", since="2026-11-20T00:00:00.000000Z")  # after October closed: never scheduled

    args = ["reports", "backfill", "--company", "acme ltd", "--period", "2026-10"]
    first = runner.invoke(args=[*args, "--requested-by", "ops@teei (ticket 42)"])
    assert first.exit_code == 0, first.output
    assert "Acme Ltd 2026-10 run 1: 1 email(s)" in first.output
    assert run_rows(db) == [
        {
            "period_key": "2026-10",
            "run_number": 1,
            "trigger": "backfill",
            "requested_by": "ops@teei (ticket 42)",
            "figures_source": "live",
        }
    ]

    again = runner.invoke(args=args)
    assert again.exit_code != 0 and "already sent" in again.output and "--force" in again.output
    assert len(run_rows(db)) == 1 and len(report_rows()) == 1, "a refused backfill writes nothing"

    forced = runner.invoke(args=[*args, "--force"])
    assert forced.exit_code == 0, forced.output
    runs = run_rows(db)
    assert [r["run_number"] for r in runs] == [1, 2] and runs[1]["requested_by"].startswith("cli:")
    keys = [r["idempotency_key"] for r in report_rows()]
    assert len(set(keys)) == 2, "a forced backfill is a new email, not a replay of the first"

    # The schedule never sends a backfilled period again (later months are its own business).
    assert "2026-10" not in runner.invoke(args=["reports", "run-due"]).output
    assert len(report_rows()) == len(set(r["idempotency_key"] for r in report_rows()))
    assert len([r for r in report_rows() if r["subject_ref"].endswith(":2026-10")]) == 2


def test_backfill_refusals_name_the_problem_and_change_nothing(runner, company, subscribe, count):
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "quarterly")
    cases = {
        ("Nobody Inc", "2026-10"): "no company is named",
        ("Acme Ltd", "2026-13"): "2026-11 (a month) or 2026-Q3",
        ("Acme Ltd", "2099-01"): "has not closed yet",
        ("Acme Ltd", "2026-10"): "no manager of Acme Ltd subscribes to monthly",
    }
    for (name, period), message in cases.items():
        result = runner.invoke(args=["reports", "backfill", "--company", name, "--period", period])
        assert result.exit_code != 0 and message in result.output, result.output
    assert count("report_runs") == 0 and count("email_outbox") == 0


def test_run_due_sends_a_closed_period_once_then_nothing(runner, company, subscribe, report_rows):
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "monthly", since="2026-10-15T00:00:00.000000Z")
    first = runner.invoke(args=["reports", "run-due"])
    assert first.exit_code == 0 and "Acme Ltd 2026-10 run 1: 1 email(s)" in first.output
    assert runner.invoke(args=["reports", "run-due"]).output.strip() == "nothing due"
    assert len([r for r in report_rows() if r["subject_ref"].endswith(":2026-10")]) == 1


def test_a_closed_years_period_states_the_filed_snapshot(
    ctx, db, company, insert_sessions, subscribe, user_id, outbox_rows
):
    company_id, manager, people = company("Acme Ltd", employees=5)
    insert_sessions([Row("language", uid, company_id, oslo("2025-03-10T18:00:00"), 60) for uid in people])
    close_year(
        db,
        company_id=company_id,
        actor_id=user_id(manager),
        period=Period(datetime(2025, 1, 1).date(), datetime(2025, 12, 31).date(), "2025", "year"),
        today=datetime.now(UTC).date(),
        tz=ZoneInfo("Europe/Oslo"),
        settings_snapshot={
            "fiscal_year_start_month": 1,
            "hourly_cost": None,
            "currency": "NOK",
            "company_time_percent": 100,
        },
    )
    # A correction after the close: live March 2025 now has 6 hours, the filed year says 5.
    insert_sessions(
        [Row("language", people[0], company_id, oslo("2025-03-20T18:00:00"), 60)],
        received_at="2099-01-01T00:00:00.000000Z",
    )
    subscribe(manager, "monthly")

    run = backfill(ctx, company_name="Acme Ltd", period="2025-03", requested_by="test")
    assert run.source == "snapshot"
    (row,) = outbox_rows(family="report")
    rendered = ctx.families["report"].render(json.loads(row["template_input"]), ctx.settings, now=clock.utcnow())
    assert "Verified hours:    5.0" in rendered.text and "as filed when 2025 was closed" in rendered.text


def _request_id(page: str) -> str:
    return re.search(r'name="request_id" type="hidden" value="([0-9a-f]{32})"', page).group(1)


def test_test_send_double_click_is_one_email_and_two_sends_are_two(client, auth, company, report_rows, count):
    _, manager, _ = company("Acme Ltd", employees=0)
    auth.login(manager)
    page = client.get("/reports/subscription").get_data(as_text=True)
    assert "Send me a test" in page
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    form = {"csrf_token": token, "request_id": _request_id(page)}

    # The same form posted twice (a double click): one email.
    for _ in range(2):
        answer = client.post("/reports/test-send", data=form)
        assert answer.status_code == 302
    assert len(report_rows()) == 1

    # A second test from a fresh page: a second email.
    page = client.get("/reports/subscription").get_data(as_text=True)
    client.post("/reports/test-send", data={"csrf_token": token, "request_id": _request_id(page)})
    rows = report_rows()
    assert len(rows) == 2 and {r["recipient"] for r in rows} == {manager}
    assert all(r["subject_ref"].startswith("report-test:") for r in rows)
    assert count("report_test_sends") == 2 and count("report_runs") == 0


def test_test_send_with_only_the_token_sends_each_time(client, auth, company, report_rows):
    """CONTRACT.md lists no field but the token: a script posting just that gets its test each time."""
    _, manager, _ = company("Acme Ltd", employees=0)
    auth.login(manager)
    token = re.search(
        r'name="csrf_token" type="hidden" value="([^"]+)"', client.get("/reports/subscription").text
    ).group(1)
    for _ in range(2):
        answer = client.post("/reports/test-send", data={"csrf_token": token}, follow_redirects=True)
        assert "is on its way" in answer.text or "will go out shortly" in answer.text
    assert len(report_rows()) == 2


def test_test_send_without_a_valid_request_id_sends_nothing(client, auth, company, count):
    _, manager, _ = company("Acme Ltd", employees=0)
    auth.login(manager)
    page = client.get("/reports/subscription").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    answer = client.post(
        "/reports/test-send", data={"csrf_token": token, "request_id": "not-an-id"}, follow_redirects=True
    )
    assert "out of date" in answer.get_data(as_text=True)
    assert count("email_outbox") == 0 and count("report_test_sends") == 0


def test_subscription_page_saves_the_choice_and_refuses_nonsense(client, auth, company, db, user_id):
    _, manager, _ = company("Acme Ltd", employees=0)
    auth.login(manager)
    page = client.get("/reports/subscription").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    saved = client.post(
        "/reports/subscription", data={"csrf_token": token, "frequency": "quarterly"}, follow_redirects=True
    )
    assert "You are subscribed (every quarter)" in saved.get_data(as_text=True)
    bad = client.post("/reports/subscription", data={"csrf_token": token, "frequency": "hourly"})
    assert bad.status_code == 400
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT frequency FROM report_subscriptions")).scalar_one() == "quarterly"


def test_only_managers_see_the_subscription_page(client, auth, make_user):
    auth.login(make_user("admin"))
    assert client.get("/reports/subscription").status_code == 403
    assert client.post("/reports/test-send").status_code in (400, 403)
