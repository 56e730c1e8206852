"""`flask attendance import FILE.csv [--platform language|mentorship]`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from flask.cli import AppGroup

from portal.attendance.imports import MAX_REPORTED_ERRORS, ImportRefused, apply_file, check_file
from portal.attendance.validation import PLATFORMS
from portal.web.extensions import portal_context

attendance_cli = AppGroup("attendance", help="Session attendance from the programme platforms.")


@attendance_cli.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--platform",
    type=click.Choice(PLATFORMS),
    default=None,
    help="The platform of every line (then the file needs no platform column).",
)
def import_attendance(file: Path, platform: str | None):
    """Import sessions from a CSV file, by the same rules as POST /api/attendance.

    Columns: platform (optional with --platform), session_id, volunteer_email, held_at, minutes,
    status, updated_at. All or nothing: every line is checked first, and one bad line refuses the
    whole file with nothing written. A clean file is then applied in batches of 1,000 lines, one
    transaction each; running the same file again changes nothing (its lines are then stale).
    """
    size = file.stat().st_size
    try:
        with click.progressbar(length=size, label="checking ", file=sys.stderr) as bar:
            check = check_file(file, platform=platform, progress=bar.update)
        if not check.ok:
            for error in check.errors:
                click.echo(f"line {error.position}: {error.reason}", err=True)
            if check.error_count > MAX_REPORTED_ERRORS:
                click.echo(f"... and {check.error_count - MAX_REPORTED_ERRORS} more bad lines", err=True)
            raise click.ClickException(f"{check.error_count} of {check.lines} lines are invalid; nothing was imported")
        with click.progressbar(length=size, label="importing", file=sys.stderr) as bar:
            ctx = portal_context()
            counts = apply_file(
                ctx.db, file, secret_key=ctx.settings.secret_key, platform=platform, progress=bar.update
            )
    except ImportRefused as error:
        raise click.ClickException(f"{error}; nothing was imported") from None
    click.echo(
        f"imported {file.name}: received {counts.received}, applied {counts.applied}, "
        f"unmatched {counts.unmatched}, stale {counts.stale}"
    )
