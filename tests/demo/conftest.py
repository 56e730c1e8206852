"""Builders for demo-request tests: the app's real handles, the form as a browser posts it, counts."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from portal.demo import service


@pytest.fixture
def ask(app):
    """Builder: request a demo through the domain function; returns the DemoRequest."""
    services = app.extensions["portal"]

    def make(**overrides):
        fields = {"name": "Sofia Reyes", "email": "sofia@lumen.example", "company": "Lumen Retail",
                  "message": "About 40 colleagues might join."}
        return service.request_demo(services.db, services.redis, services.settings, **{**fields, **overrides})

    return make


@pytest.fixture
def post_demo(client, auth):
    """Builder: POST the public form; `token` replays an earlier form's CSRF token."""
    def post(token=None, **overrides):
        form = {"name": "Sofia Reyes", "email": "sofia@lumen.example", "company": "Lumen Retail",
                "message": "About 40 colleagues might join.", "website": ""}
        form.update(overrides)
        form["csrf_token"] = token or auth.csrf_token("/demo")
        return client.post("/demo", data=form)

    return post


@pytest.fixture
def rows(db):
    def rows(sql, **params):
        with db.read() as conn:
            return [dict(r) for r in conn.execute(sa.text(sql), params).mappings()]

    return rows
