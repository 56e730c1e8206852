"""`flask scim token --company NAME` and `flask scim revoke --company NAME`."""

from __future__ import annotations

import click
import sqlalchemy as sa
from flask.cli import AppGroup

from portal.core import clock
from portal.core.text import plain_text
from portal.scim.operations import create_token, revoke_tokens
from portal.web.extensions import portal_context

scim_cli = AppGroup("scim", help="Bearer tokens for a company's directory (SCIM 2.0 at /scim/v2).")


def _company_id(name: str) -> int:
    with portal_context().db.read() as conn:
        company_id = conn.execute(
            sa.text("SELECT id FROM companies WHERE name_key = :key"),
            {"key": " ".join(plain_text(name).split()).lower()},
        ).scalar()
    if company_id is None:
        raise click.ClickException(f"no company named {name!r}")
    return company_id


@scim_cli.command("token")
@click.option("--company", required=True, help="The company's name, as in the portal.")
def token(company: str):
    """Make a new SCIM bearer token for the company and print it on the last line (shown once; only
    its hash is stored). Older tokens keep working until `scim revoke`."""
    made = create_token(portal_context().db, company_id=_company_id(company), acting_user_id=None, now=clock.utcnow())
    click.echo(f"A new SCIM token for {company}; it is shown only now. Base URL: <PUBLIC_BASE_URL>/scim/v2")
    click.echo(made)


@scim_cli.command("revoke")
@click.option("--company", required=True, help="The company's name, as in the portal.")
def revoke(company: str):
    """Revoke every SCIM token of the company at once."""
    count = revoke_tokens(portal_context().db, company_id=_company_id(company), acting_user_id=None, now=clock.utcnow())
    click.echo(f"revoked {count} token(s)")
