"""Writing report emails: the schedule's pass, a backfill, a manager's test send.

Each run is one `write_then_publish` block: its `report_runs` row and its email intents commit
together, so a run row exists exactly when its emails do, and the emails are published after the
commit (or found by the relay if Redis is away). Whether a period still needs its run is decided
inside that write transaction, so two passes at once (the worker and `flask reports run-due`)
write one run; the unique (company, period, run number) is the backstop.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import Database, json_array
from portal.core.periods import (
    MONTHLY,
    Period,
    PeriodKeyError,
    closed_between,
    closes_at,
    frequency_of,
    last_closed,
    parse_period_key,
    period_key,
    report_timezone,
)
from portal.core.text import InputError
from portal.outbox import PeriodicTask, write_then_publish
from portal.report_emails.content import SNAPSHOT, email_input
from portal.report_emails.emails import run_email, test_email
from portal.report_emails.queries import (
    FREQUENCIES,
    OFF,
    SubscriptionError,
    frequency_of_user,
    reading_language,
    subscribed_companies,
    subscribers,
)
from portal.reports import Figures, file_on

log = logging.getLogger(__name__)
SCHEDULE, BACKFILL = "schedule", "backfill"
_REQUEST_ID = re.compile(r"^[0-9a-f]{32}$")


class RunError(InputError):
    """A backfill or test send that cannot be made; the message is safe to show, and nothing was written."""


@dataclass(frozen=True)
class RunResult:
    company_id: int
    company_name: str
    period_key: str
    run_number: int
    recipients: int
    source: str
    queued: bool


@dataclass
class PassReport:
    runs: list[RunResult] = field(default_factory=list)

    @property
    def emails(self) -> int:
        return sum(run.recipients for run in self.runs)


_LATEST_RUN = sa.text("SELECT MAX(run_number) FROM report_runs WHERE company_id = :c AND period_key = :p")
_INSERT_RUN = sa.text("""
    INSERT INTO report_runs (company_id, period_key, run_number, trigger, requested_by, recipients,
                             figures_source, created_at)
    VALUES (:c, :p, :n, :trigger, :by, :recipients, :source, :now)
""")
_RUN_KEYS = sa.text(
    "SELECT company_id, period_key FROM report_runs WHERE period_key IN (SELECT value FROM json_each(:keys))"
)


def run_due(ctx, *, now: datetime | None = None, company_id: int | None = None) -> PassReport:
    """One pass of the schedule: every subscribed company's closed periods that have no run yet
    (or one company's, with `company_id`).

    After downtime across several period ends, each missed period is written once, oldest first.
    """
    tz = report_timezone(ctx.settings)
    now = now or clock.utcnow()
    due: list[tuple[dict, Period]] = []
    for company in subscribed_companies(ctx.db):
        if company_id is not None and company["company_id"] != company_id:
            continue
        since = clock.parse(company["since"])
        due.extend((company, period) for period in closed_between(company["frequency"], since, now, tz))
    report = PassReport()
    if not due:
        return report
    keys = sorted({period_key(period) for _, period in due})
    with ctx.db.read() as conn:
        done = set(conn.execute(_RUN_KEYS, {"keys": json_array(keys)}).all())
    for company, period in due:
        if (company["company_id"], period_key(period)) in done:
            continue
        result = _write_run(ctx, company["company_id"], company["company_name"], period, SCHEDULE, None, False)
        if result is not None:
            report.runs.append(result)
    return report


def backfill(
    ctx, *, company_name: str, period: str, requested_by: str, force: bool = False, now: datetime | None = None
) -> RunResult:
    """One closed period's emails for one company's subscribers, recorded with who asked.

    Refused if the period already has a run (scheduled or backfilled), unless forced: a forced
    backfill is a new run with new idempotency keys, so its emails really go out again.
    """
    try:
        wanted = parse_period_key(period)
    except PeriodKeyError as error:
        raise RunError(str(error)) from None
    if not requested_by.strip():
        raise RunError("say who asks for the backfill (--requested-by)")
    tz = report_timezone(ctx.settings)
    if closes_at(wanted, tz) > (now or clock.utcnow()):
        raise RunError(f"{wanted.label} has not closed yet in {tz}: it can be sent from {wanted.end} on")
    with ctx.db.read() as conn:
        found = conn.execute(
            sa.text("SELECT id, name FROM companies WHERE name_key = :k"), {"k": " ".join(company_name.split()).lower()}
        ).first()
    if found is None:
        raise RunError(f"no company is named {company_name!r}")
    return _write_run(ctx, found.id, found.name, wanted, BACKFILL, requested_by.strip()[:200], force)


def _write_run(ctx, company_id, company_name, period: Period, trigger, requested_by, force) -> RunResult | None:
    key, frequency = period_key(period), frequency_of(period)
    tz = report_timezone(ctx.settings)
    kind = "scheduled" if trigger == SCHEDULE else "backfill"
    # Read before the write transaction: the figures as of the run, without holding the write lock.
    shared, found = email_input(
        ctx.db, company_id=company_id, company_name=company_name, period=period, tz=tz, kind=kind
    )
    with write_then_publish(ctx, now=clock.utcnow()) as work:
        latest = work.conn.execute(_LATEST_RUN, {"c": company_id, "p": key}).scalar()
        if latest and trigger == SCHEDULE:
            return None  # another pass wrote it first
        if latest and not force:
            raise RunError(
                f"{period.label} was already sent to {company_name} (run {latest}); add --force to send again"
            )
        recipients = subscribers(work.conn, company_id=company_id, frequency=frequency)
        if not recipients:
            if trigger == BACKFILL:
                raise RunError(f"no manager of {company_name} subscribes to {frequency} report emails")
            return None
        run_number = (latest or 0) + 1
        shared = _as_filed(work.conn, shared, company_id=company_id, period=period, tz=tz, now=clock.iso(work.now))
        work.conn.execute(
            _INSERT_RUN,
            {
                "c": company_id,
                "p": key,
                "n": run_number,
                "trigger": trigger,
                "by": requested_by,
                "recipients": len(recipients),
                "source": found.source,
                "now": clock.iso(work.now),
            },
        )
        work.add(
            *(
                run_email(
                    shared,
                    company_id=company_id,
                    period_key=key,
                    run_number=run_number,
                    manager=manager,
                    language=manager.language,  # theirs, read in this write (queries.subscribers)
                )
                for manager in recipients
            )
        )
    return RunResult(company_id, company_name, key, run_number, len(recipients), found.source, work.queued)


def _as_filed(conn, shared: dict, *, company_id: int, period: Period, tz, now: str) -> dict:
    """The email's figures as its period is filed (the first filing fixes them), its attachment's mask
    and the corrections its filing states."""
    filed = file_on(
        conn,
        company_id=company_id,
        period=period,
        figures=Figures.from_dict(shared["figures"]),
        source="email",
        tz=tz,
        now=now,
    )
    corrections = None if filed.corrections is None else filed.corrections.to_dict()
    # The filing record keeps who was alone where (opaque keys) for later masks; the email needs none.
    figures = {**filed.figures.to_dict(), "alone": {}, "largest": {}}
    # The filing's one ID on the email and its attachment; outside a closed year, its "as of" is the
    # moment the period was first filed, as every other copy states.
    as_of = shared["as_of"] if shared["source"] == SNAPSHOT else filed.filed_at
    return {
        **shared,
        "figures": figures,
        "mask": filed.mask.to_dict(),
        "corrections": corrections,
        "report_id": filed.report_id,
        "as_of": as_of,
        # The goal and the year before as the filing stored them (None: filed before they were).
        "comparison": None if filed.comparison is None else filed.comparison.to_dict(),
    }


@dataclass(frozen=True)
class TestSendResult:
    period_label: str
    new: bool  # False: the same form was posted twice, and its one email already exists
    queued: bool
    period: Period | None = None  # the page names it in its reader's language


def test_send(ctx, *, manager, request_id: str, now: datetime | None = None) -> TestSendResult:
    """The last complete period's email to the signed-in manager, now, through the outbox.

    `manager` has id, email, name, company_id and company_name. The period follows the manager's
    subscription (monthly when they have none).
    """
    if not _REQUEST_ID.match(request_id or ""):
        raise RunError("The form was incomplete. Reload the page and try again.")
    tz, now = report_timezone(ctx.settings), now or clock.utcnow()
    frequency = frequency_of_user(ctx.db, user_id=manager.id, company_id=manager.company_id)
    period = last_closed(MONTHLY if frequency == OFF else frequency, now, tz)
    shared, _ = email_input(
        ctx.db, company_id=manager.company_id, company_name=manager.company_name, period=period, tz=tz, kind="test"
    )
    with write_then_publish(ctx, now=now) as work:
        new = work.conn.execute(
            sa.text("""
                INSERT INTO report_test_sends (user_id, company_id, period_key, request_id, created_at)
                VALUES (:u, :c, :p, :r, :now) ON CONFLICT (user_id, request_id) DO NOTHING
            """),
            {
                "u": manager.id,
                "c": manager.company_id,
                "p": period_key(period),
                "r": request_id,
                "now": clock.iso(work.now),
            },
        ).rowcount
        if new:
            shared = _as_filed(
                work.conn, shared, company_id=manager.company_id, period=period, tz=tz, now=clock.iso(work.now)
            )
            language = reading_language(work.conn, user_id=manager.id)
            work.add(test_email(shared, manager=manager, request_id=request_id, language=language))
    return TestSendResult(period.label, bool(new), work.queued, period)


def schedule_task(settings) -> PeriodicTask:
    """The schedule as the worker runs it: a pass every REPORT_SCHEDULE_INTERVAL_SECONDS, one worker at a time."""

    def one_pass(ctx, now: datetime) -> None:
        report = run_due(ctx, now=now)
        if report.runs:
            log.info("report schedule wrote %d run(s), %d email(s)", len(report.runs), report.emails)

    return PeriodicTask("report-schedule", settings.report_schedule_interval_seconds, one_pass)


def change_subscription(ctx, *, user_id: int, company_id: int, frequency: str, now: datetime | None = None) -> None:
    """Save a manager's choice of report emails. Periods that closed under their old choice and
    that the schedule has not written yet are written first: the schedule only looks at current
    choices, so a period closed minutes before a change (or during the worker's downtime) would
    otherwise never be sent. Saving first and crashing before the runs could lose them; this order
    at worst leaves the old choice in place, and the next pass writes the same runs."""
    if frequency != frequency_of_user(ctx.db, user_id=user_id, company_id=company_id):
        run_due(ctx, now=now, company_id=company_id)
    save_subscription(ctx.db, user_id=user_id, company_id=company_id, frequency=frequency)


_UPSERT = sa.text("""
    INSERT INTO report_subscriptions (user_id, company_id, frequency, since, updated_at)
    VALUES (:user_id, :company_id, :frequency, :now, :now)
    ON CONFLICT (user_id) DO UPDATE SET
        since = CASE WHEN report_subscriptions.frequency = excluded.frequency
                      AND report_subscriptions.company_id = excluded.company_id
                     THEN report_subscriptions.since ELSE excluded.since END,
        company_id = excluded.company_id, frequency = excluded.frequency, updated_at = excluded.updated_at
""")


def save_subscription(db: Database, *, user_id: int, company_id: int, frequency: str) -> None:
    """Subscribe (monthly, quarterly) or stop (off). Choosing the same frequency again keeps its start."""
    if frequency not in FREQUENCIES:
        raise SubscriptionError("Choose monthly, quarterly or off.")
    with db.write() as conn:
        conn.execute(
            _UPSERT, {"user_id": user_id, "company_id": company_id, "frequency": frequency, "now": clock.now_iso()}
        )
