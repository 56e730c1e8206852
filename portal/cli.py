"""Commands registered on the app: `flask --app portal db|users|demo|outbox|attendance|reports ...`."""

from __future__ import annotations

import json
from pathlib import Path

import click
from flask import Flask
from flask.cli import AppGroup

from portal.attendance.cli import attendance_cli
from portal.auth.operations import AccountError, create_user
from portal.core import clock, schema, server_history
from portal.core.periods import report_timezone
from portal.outbox.operate.operator import (
    FIGURES,
    LABELS,
    ActionRefused,
    compare_suppressions,
    look_up_missing_receipts,
    past_provider_memory,
    pause_sending,
    purge,
    reconcile,
    relay_pass,
    resume_sending,
)
from portal.outbox.operate.reads import status_counts
from portal.report_emails.cli import reports_cli
from portal.scim.cli import scim_cli
from portal.seed import seed_demo
from portal.web.extensions import portal_context

db_cli = AppGroup("db", help="Database schema.")
users_cli = AppGroup("users", help="Sign-in accounts.")
demo_cli = AppGroup("demo", help="Demo data.")
outbox_cli = AppGroup("outbox", help="The email outbox.")


@db_cli.command("upgrade")
def db_upgrade():
    """Apply pending migrations in order; running it twice changes nothing."""
    try:
        applied = schema.upgrade(portal_context().db)
    except schema.MigrationError as error:
        raise click.ClickException(str(error)) from None
    if applied:
        for name in applied:
            click.echo(f"applied {name}")
    else:
        click.echo("database is up to date")


@db_cli.command("purge-server-history")
@click.argument("data_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
def db_purge_server_history(data_dir):
    """Remove what erased people left on a STOPPED libSQL server (its --db-path): free space in the
    database, the replication log and its snapshots. Start the server again afterwards."""
    try:
        purged = server_history.purge(data_dir)
    except server_history.PurgeRefused as refused:
        raise click.ClickException(str(refused)) from None
    for name in purged.removed:
        click.echo(f"removed {name}")
    click.echo(f"database rewritten: {purged.bytes_before:,} bytes before, {purged.bytes_after:,} after")


@users_cli.command("create")
@click.option("--email", required=True)
@click.option("--role", required=True, type=click.Choice(["admin", "manager"]))
@click.option("--company", default=None, help="Company name (managers); created if needed.")
@click.option("--password", required=True)
@click.option("--name", default="")
def users_create(email, role, company, password, name):
    """Create a login (and its company, if new)."""
    try:
        user_id = create_user(
            portal_context().db, email=email, password=password, role=role, company=company, name=name
        )
    except AccountError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"created {role} #{user_id}")


@demo_cli.command("seed")
@click.option(
    "--without-attendance",
    is_flag=True,
    help="Leave the sessions out (make run has the programme simulator post them through the API).",
)
def demo_seed(without_attendance):
    """Demo company, admin, manager, employees and session attendance, with a year of history (idempotent)."""
    ctx = portal_context()
    logins = seed_demo(ctx.db, secret_key=ctx.settings.secret_key, attendance=not without_attendance, history=True)
    click.echo("demo company ready; sign in with:")
    for email, role, password in logins:
        click.echo(f"  {role:8} {email}  password: {password}")


@outbox_cli.command("relay")
def outbox_relay():
    """One relay pass: publish pending rows and re-publish rows whose message may be lost."""
    ctx = portal_context()
    report = relay_pass(ctx.db, ctx.redis, ctx.settings, families=ctx.families, now=clock.utcnow())
    if not report.published:
        click.echo("nothing to publish")
        return
    state = "published" if report.queued else f"could not publish ({report.error}); left pending"
    click.echo(f"{state}: {len(report.published)} rows")
    for outbox_id in report.published:
        click.echo(f"  {outbox_id}")
    if not report.queued:
        raise SystemExit(1)


@outbox_cli.command("status")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def outbox_status(as_json):
    """Counts of outbox rows by family and status."""
    counts = status_counts(portal_context().db)
    if as_json:
        click.echo(json.dumps(counts))
        return
    if not counts:
        click.echo("the outbox is empty")
        return
    click.echo(f"{'family':24} {'status':12} {'count':>6}")
    for row in counts:
        click.echo(f"{row['family']:24} {row['status']:12} {row['count']:>6}")


@outbox_cli.command("reconcile")
@click.option("--date", "day", required=True, type=click.DateTime(formats=["%Y-%m-%d"]), help="A day, YYYY-MM-DD.")
def outbox_reconcile(day):
    """What became of the emails committed on one day (in PORTAL_TIMEZONE), by family; a total last."""
    ctx = portal_context()
    zone = report_timezone(ctx.settings)
    found = reconcile(
        ctx.db,
        days=[day.date()],
        zone=zone,
        no_receipt_hours=ctx.settings.outbox_no_receipt_hours,
        now=clock.utcnow(),
    )
    widths = [max(len(LABELS[f]), 6) for f in FIGURES]
    click.echo(f"{day.date().isoformat()} ({ctx.settings.portal_timezone})")
    click.echo(" ".join([f"{'family':24}", *(f"{LABELS[f]:>{w}}" for f, w in zip(FIGURES, widths, strict=True))]))
    lines = [(family, found.by_family[family][0]) for family in found.families] + [("total", found.totals[0])]
    for name, figures in lines:
        click.echo(" ".join([f"{name:24}", *(f"{figures[f]:>{w}}" for f, w in zip(FIGURES, widths, strict=True))]))


@outbox_cli.command("lookups")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Ask about at most this many emails.")
def outbox_lookups(limit):
    """One pass of the receipt lookups now: ask the provider about each accepted email with no receipt
    for OUTBOX_NO_RECEIPT_HOURS (within OUTBOX_LOOKUPS_PER_HOUR), and print what it said of each."""
    ctx, now = portal_context(), clock.utcnow()
    found = look_up_missing_receipts(ctx, now=now, limit=limit)
    for outbox_id, answer in found.answers:
        click.echo(f"  {outbox_id}: {answer}")
    click.echo(found.summary())
    forgotten = past_provider_memory(ctx.db, retention_days=ctx.settings.provider_log_retention_days, now=now)
    click.echo(
        f"{forgotten} accepted emails passed the provider's memory "
        f"(PROVIDER_LOG_RETENTION_DAYS={ctx.settings.provider_log_retention_days}) without a final status"
    )


@outbox_cli.command("compare-suppressions")
def outbox_compare_suppressions():
    """Compare Resend's suppression list with the portal's now (the worker does once a day); the
    differences show on the reconciliation page, each with what may be done about it."""
    ctx = portal_context()
    result = compare_suppressions(ctx, now=clock.utcnow())
    click.echo(result.summary())
    if result.stopped:
        raise SystemExit(1)


@outbox_cli.command("purge")
def outbox_purge():
    """Apply the retention rules now: old receipt bodies, settled rows' recipients and input, and the
    areas' personal data past keeping (demo requests, declined applications, open invitations)."""
    from portal.privacy.retention import purge_personal_data

    ctx, now = portal_context(), clock.utcnow()
    click.echo(purge(ctx.db, ctx.settings, now=now).summary())
    for kind, changed in purge_personal_data(ctx.db, ctx.settings, now=now).items():
        click.echo(f"{kind}: {changed} erased")


@outbox_cli.command("pause")
@click.option("--family", default=None, help="One email family; without it, all sending.")
@click.option("--reason", required=True, help="Why: kept on record with the pause.")
def outbox_pause(family, reason):
    """Pause all sending, or one family's, until `outbox resume`: no worker makes another provider
    request for it once this returns; waiting emails keep their place and every attempt."""
    ctx = portal_context()
    try:
        result = pause_sending(ctx, family=family, reason=reason, actor_user_id=None, now=clock.utcnow())
    except ActionRefused as refused:
        raise click.ClickException(str(refused)) from None
    scope = family or "all sending"
    if not result.confirmed:
        click.echo(f"paused {scope}; a request already out had no answer yet within the provider's timeout")
        raise SystemExit(1)
    click.echo(f"paused {scope}: no further provider request will leave")


@outbox_cli.command("resume")
@click.option("--family", default=None, help="The family whose pause ends; without it, the pause of all sending.")
@click.option("--reason", required=True, help="Why: kept on record with the resume.")
def outbox_resume(family, reason):
    """End a pause and publish the emails it held: transactional before campaigns, each in order."""
    ctx = portal_context()
    try:
        result = resume_sending(ctx, family=family, reason=reason, actor_user_id=None, now=clock.utcnow())
    except ActionRefused as refused:
        raise click.ClickException(str(refused)) from None
    click.echo(f"resumed {family or 'all sending'}: {result.published} waiting emails published")


def register_commands(app: Flask) -> None:
    for group in (db_cli, users_cli, demo_cli, outbox_cli, attendance_cli, reports_cli, scim_cli):
        app.cli.add_command(group)
