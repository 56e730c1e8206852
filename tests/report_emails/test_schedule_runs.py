"""The schedule's pass: one run per company and period, written with its emails; catch-up after
downtime; only managers still subscribed and still in the company receive anything."""

import base64
import io

import pytest
import sqlalchemy as sa
from pypdf import PdfReader

from portal.core.clock import now_iso
from portal.report_emails import operations
from portal.report_emails.operations import run_due, save_subscription
from tests.reports.conftest import Row, oslo, utc


def runs_table(db):
    with db.read() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                sa.text("SELECT company_id, period_key, run_number, trigger, recipients FROM report_runs ORDER BY id")
            )
        ]


def test_catch_up_after_three_months_sends_each_missed_month_once(ctx, db, company, subscribe, report_rows):
    company_id, manager, _ = company("Acme Ltd", employees=1)
    subscribe(manager, "monthly", since="2026-08-10T08:00:00.000000Z")

    # The worker was down from August until mid-November: one pass catches up.
    report = run_due(ctx, now=utc("2026-11-15T12:00:00"))
    assert [r.period_key for r in report.runs] == ["2026-08", "2026-09", "2026-10"]
    assert runs_table(db) == [
        (company_id, "2026-08", 1, "schedule", 1),
        (company_id, "2026-09", 1, "schedule", 1),
        (company_id, "2026-10", 1, "schedule", 1),
    ]
    rows = report_rows()
    assert sorted(r["subject_ref"] for r in rows) == [f"report-run:{company_id}:2026-{m}" for m in ("08", "09", "10")]
    assert {r["recipient"] for r in rows} == {manager}

    # The next passes, the same day and after the next month closes, never send a period twice.
    assert run_due(ctx, now=utc("2026-11-15T12:05:00")).runs == []
    assert [r.period_key for r in run_due(ctx, now=utc("2026-12-01T06:00:00")).runs] == ["2026-11"]
    assert len(report_rows()) == 4


def test_quarterly_and_monthly_subscribers_each_get_their_own_period(ctx, company, make_user, subscribe, report_rows):
    _, monthly, _ = company("Acme Ltd", employees=0)
    quarterly = make_user("manager", company="Acme Ltd")
    subscribe(monthly, "monthly", since="2026-09-15T00:00:00.000000Z")
    subscribe(quarterly, "quarterly", since="2026-09-15T00:00:00.000000Z")
    report = run_due(ctx, now=utc("2026-10-01T08:00:00"))
    assert sorted((r.period_key, r.recipients) for r in report.runs) == [("2026-09", 1), ("2026-Q3", 1)]
    by_recipient = {r["recipient"]: r["subject_ref"] for r in report_rows()}
    assert by_recipient[monthly].endswith(":2026-09") and by_recipient[quarterly].endswith(":2026-Q3")


def test_unsubscribed_and_departed_managers_get_nothing(ctx, db, company, make_user, subscribe, user_id, report_rows):
    _, stays, _ = company("Acme Ltd", employees=0)
    unsubscribed = make_user("manager", company="Acme Ltd")
    departed = make_user("manager", company="Acme Ltd")
    make_user("manager", company="Other Co")
    for email in (stays, unsubscribed, departed):
        subscribe(email, "monthly", since="2026-09-15T00:00:00.000000Z")
    subscribe(unsubscribed, "off")
    # The departed manager moved to another company: their membership here ended.
    with db.write() as conn:
        other = conn.execute(sa.text("SELECT id FROM companies WHERE name = 'Other Co'")).scalar_one()
        uid = user_id(departed)
        now = now_iso()
        conn.execute(sa.text("UPDATE company_memberships SET ended_at = :t WHERE user_id = :u"), {"t": now, "u": uid})
        conn.execute(sa.text("UPDATE users SET company_id = :c WHERE id = :u"), {"c": other, "u": uid})
        conn.execute(
            sa.text("INSERT INTO company_memberships (user_id, company_id, started_at) VALUES (:u, :c, :t)"),
            {"u": uid, "c": other, "t": now},
        )

    run_due(ctx, now=utc("2026-10-02T08:00:00"))
    assert [r["recipient"] for r in report_rows()] == [stays]


def test_a_company_whose_last_subscriber_left_gets_no_run(ctx, db, company, subscribe, count):
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "monthly", since="2026-09-15T00:00:00.000000Z")
    subscribe(manager, "off")
    assert run_due(ctx, now=utc("2026-10-02T08:00:00")).runs == []
    assert count("report_runs") == 0 and count("email_outbox") == 0


def test_a_run_row_never_exists_without_its_emails(ctx, db, company, subscribe, count, monkeypatch):
    _, manager, _ = company("Acme Ltd", employees=0)
    subscribe(manager, "monthly", since="2026-09-15T00:00:00.000000Z")

    def broken(*args, **kwargs):
        raise RuntimeError("the intent could not be built")

    monkeypatch.setattr(operations, "run_email", broken)
    with pytest.raises(RuntimeError):
        run_due(ctx, now=utc("2026-10-02T08:00:00"))
    assert count("report_runs") == 0, "the run row rolled back with its intents"
    monkeypatch.undo()
    assert len(run_due(ctx, now=utc("2026-10-02T08:00:00")).runs) == 1, "so the next pass still sends the month"
    assert count("report_runs") == 1 and count("email_outbox") == 1


def test_the_email_states_the_months_figures_and_carries_its_pdf(
    ctx, company, insert_sessions, subscribe, report_rows, deliver, provider_model
):
    company_id, manager, people = company("Acme Ltd", employees=10)
    insert_sessions(
        [Row("mentorship", uid, company_id, oslo("2026-03-02T18:00:00"), 60) for uid in people[1:6]]
        + [Row("language", uid, company_id, oslo("2026-03-09T18:00:00"), 60) for uid in people[6:]]
        + [
            Row("language", people[0], company_id, oslo("2026-03-31T23:30:00"), 90),  # 21:30 UTC: March in Oslo
            Row("language", people[0], company_id, oslo("2026-04-01T00:30:00"), 45),  # 31 March in UTC, April here
        ]
    )
    subscribe(manager, "monthly", since="2026-03-15T00:00:00.000000Z")
    run_due(ctx, now=utc("2026-04-01T06:00:00"))
    (row,) = report_rows()
    assert deliver(row["id"]) == "ack:sent"

    (email,) = provider_model.sent()
    assert email["to"] == [manager] and "March 2026" in email["subject"]
    # 9 × 60 + 90 minutes are March's 10.5 hours; the 45 minutes after local midnight are April's.
    assert "10.50" in email["html"] and "Verified hours:    10.50" in email["text"]
    assert "/reports?from=2026-03-01&amp;to=2026-03-31" in email["html"]
    (attachment,) = email["attachments"]
    assert attachment["filename"] == "teei-report-2026-03.pdf"
    pdf = base64.b64decode(attachment["content"])
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages).split())
    assert "Acme Ltd" in text and "1 Mar 2026 to 31 Mar 2026" in text and "10.50 Verified hours" in text


def test_a_new_subscriber_gets_no_history_and_saving_again_keeps_the_catch_up(ctx, db, company, subscribe, user_id):
    company_id, manager, _ = company("Acme Ltd", employees=0)
    uid = subscribe(manager, "monthly", since="2026-08-10T08:00:00.000000Z")

    def since():
        with db.read() as conn:
            return conn.execute(
                sa.text("SELECT since FROM report_subscriptions WHERE user_id = :u"), {"u": uid}
            ).scalar()

    # Saving the same choice again (the page's Save) keeps its start: missed months still follow.
    save_subscription(db, user_id=uid, company_id=company_id, frequency="monthly")
    assert since() == "2026-08-10T08:00:00.000000Z"
    # A new choice starts now: no quarter that closed before it is sent.
    save_subscription(db, user_id=uid, company_id=company_id, frequency="quarterly")
    assert since() > "2026-08-10T08:00:00.000000Z"
    assert run_due(ctx).runs == []


def test_a_period_closed_before_a_change_of_frequency_is_still_sent(ctx, db, company, subscribe, report_rows):
    """Monthly until today: the months closed since, which the schedule has not written yet (the
    minutes after midnight, or the worker was down), go out before the choice becomes quarterly."""
    company_id, manager, _ = company("Acme Ltd", employees=1)
    manager_id = subscribe(manager, "monthly", since="2026-09-10T08:00:00.000000Z")
    operations.change_subscription(
        ctx,
        user_id=manager_id,
        company_id=company_id,
        frequency="quarterly",
        now=utc("2026-11-01T00:02:00"),
    )
    assert [(key, trigger) for _, key, _, trigger, _ in runs_table(db)] == [
        ("2026-09", "schedule"),
        ("2026-10", "schedule"),
    ]
    assert {r["recipient"] for r in report_rows()} == {manager}
    # From now on only quarters: the next pass owes nothing until Q4 closes.
    assert run_due(ctx, now=utc("2026-11-15T12:00:00")).runs == []


def test_choosing_the_same_frequency_again_writes_nothing_early(ctx, db, company, subscribe):
    company_id, manager, _ = company("Acme Ltd", employees=1)
    manager_id = subscribe(manager, "monthly", since="2026-09-10T08:00:00.000000Z")
    operations.change_subscription(
        ctx, user_id=manager_id, company_id=company_id, frequency="monthly", now=utc("2026-11-01T00:02:00")
    )
    assert runs_table(db) == [], "the schedule's pass sends those"


def test_the_email_states_hours_to_two_decimals_that_add_up(
    ctx, company, insert_sessions, subscribe, report_rows, deliver, provider_model
):
    """435 minutes are 7.25 hours in the email, its programme lines and its PDF, never 7.2."""
    company_id, manager, people = company("Acme Ltd", employees=10)
    # Five colleagues in each programme: no group is small, so the email shows every figure.
    minutes = {"language": [45, 45, 45, 45, 30], "mentorship": [45, 45, 45, 45, 45]}
    rows = [
        Row("language", people[n], company_id, oslo("2026-03-03T18:00:00"), m)
        for n, m in enumerate(minutes["language"])
    ]
    rows += [
        Row("mentorship", people[5 + n], company_id, oslo("2026-03-05T18:00:00"), m)
        for n, m in enumerate(minutes["mentorship"])
    ]
    insert_sessions(rows)
    subscribe(manager, "monthly", since="2026-03-15T00:00:00.000000Z")
    run_due(ctx, now=utc("2026-04-01T06:00:00"))
    (row,) = report_rows()
    assert deliver(row["id"]) == "ack:sent"
    (email,) = provider_model.sent()

    def shown(total: int) -> str:  # independent of the portal: integer hundredths, half up
        hundredths = (total * 200 + 60) // 120
        return f"{hundredths // 100}.{hundredths % 100:02d}"

    assert f"Verified hours:    {shown(435)}" in email["text"] and shown(435) == "7.25"
    lines = email["text"].splitlines()  # each programme on a line of its own, as a reader sees it
    assert f"TEEI Language: {shown(sum(minutes['language']))} hours in 5 sessions" in lines  # 3.50
    assert f"TEEI Mentorship: {shown(sum(minutes['mentorship']))} hours in 5 sessions" in lines  # 3.75
    pdf = base64.b64decode(email["attachments"][0]["content"])
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages).split())
    assert "7.25 Verified hours" in text
