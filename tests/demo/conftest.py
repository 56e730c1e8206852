"""Builders for demo-request tests: the operation with the app's context, the form as a browser posts it."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from portal.demo import operations


@pytest.fixture
def ask(ctx):
    """Builder: request a demo through the operation; returns the DemoRequest."""

    def make(**overrides):
        fields = {
            "name": "Sofia Reyes",
            "email": "sofia@lumen.example",
            "company": "Lumen Retail",
            "message": "About 40 colleagues might join.",
        }
        return operations.request_demo(ctx, **{**fields, **overrides})

    return make


@pytest.fixture
def post_demo(client, auth):
    """Builder: POST the public form; `token` replays an earlier form's CSRF token."""

    def post(token=None, **overrides):
        form = {
            "name": "Sofia Reyes",
            "email": "sofia@lumen.example",
            "company": "Lumen Retail",
            "message": "About 40 colleagues might join.",
            "website": "",
        }
        form.update(overrides)
        form["csrf_token"] = token or auth.csrf_token("/demo")
        return client.post("/demo", data=form)

    return post


@pytest.fixture
def table_rows(db):
    """table_rows(table): every row of a demo table, as dicts in insertion order (outbox rows: outbox_rows)."""

    def read(table):
        with db.read() as conn:
            return [dict(r) for r in conn.execute(sa.text(f"SELECT * FROM {table} ORDER BY rowid")).mappings()]

    return read
