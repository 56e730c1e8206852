"""`flask reports run-due` and `flask reports backfill --company NAME --period 2026-11|2026-Q3`."""

from __future__ import annotations

import getpass

import click
from flask.cli import AppGroup

from portal.report_emails.operations import RunError, backfill, run_due
from portal.web.extensions import portal_context

reports_cli = AppGroup("reports", help="Report emails: the schedule and backfills.")


def _describe(run) -> str:
    state = "queued" if run.queued else "written; publication left to the relay"
    return (
        f"{run.company_name} {run.period_key} run {run.run_number}: {run.recipients} email(s) "
        f"({run.source} figures), {state}"
    )


@reports_cli.command("run-due")
def run_due_command():
    """One pass of the report schedule: every subscription whose period has closed and has no run yet."""
    report = run_due(portal_context())
    if not report.runs:
        click.echo("nothing due")
        return
    for run in report.runs:
        click.echo(_describe(run))
    click.echo(f"{len(report.runs)} run(s), {report.emails} email(s)")


@reports_cli.command("backfill")
@click.option("--company", "company_name", required=True, help="The company's name.")
@click.option("--period", required=True, help="2026-11 (a month) or 2026-Q3 (a quarter).")
@click.option(
    "--requested-by",
    default=None,
    help="Who asks for it, recorded with the run (default: the operating-system user running the command).",
)
@click.option("--force", is_flag=True, help="Send again although the period already has a run.")
def backfill_command(company_name, period, requested_by, force):
    """Run (or, with --force, re-send) one closed period's report emails for one company's subscribers."""
    try:
        run = backfill(
            portal_context(),
            company_name=company_name,
            period=period,
            requested_by=requested_by or f"cli:{getpass.getuser()}",
            force=force,
        )
    except RunError as error:
        raise click.ClickException(str(error)) from None
    click.echo(_describe(run))
