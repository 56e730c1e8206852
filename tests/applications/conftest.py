"""Builders for application tests: the app's real handles, a submitted application, table counts."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from portal.applications import service


@pytest.fixture
def handles(app):
    """(db, redis, settings) as the domain functions take them."""
    services = app.extensions["portal"]
    return services.db, services.redis, services.settings


@pytest.fixture
def submit(handles):
    """Builder: submit an application through the domain function; returns the Submission."""
    db, redis, settings = handles

    def make(**overrides):
        fields = {"company_name": "Fjord Analytics AS", "contact_name": "Ingrid Dahl",
                  "contact_email": "ingrid@fjord.example", "employee_count": 120,
                  "message": "We would like our analysts to mentor."}
        return service.submit_application(db, redis, settings, **{**fields, **overrides})

    return make


@pytest.fixture
def admin_id(db, make_user):
    email = make_user("admin")
    with db.read() as conn:
        return conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar_one()


@pytest.fixture
def decide(handles, admin_id):
    db, redis, settings = handles

    def make(application_id, decision, note="", **kwargs):
        kwargs.setdefault("admin_user_id", admin_id)
        return service.record_decision(db, redis, settings, application_id=application_id, decision=decision,
                                       note=note, **kwargs)

    return make


@pytest.fixture
def outbox(db):
    """All outbox rows, oldest first, as dicts."""
    def rows(**filters):
        where = " AND ".join(f"{column} = :{column}" for column in filters) or "1=1"
        with db.read() as conn:
            return [dict(r) for r in conn.execute(
                sa.text(f"SELECT * FROM email_outbox WHERE {where} ORDER BY created_at, id"), filters).mappings()]

    return rows


@pytest.fixture
def post_application(client, auth):
    """Builder: POST the public form as a browser would; `token` replays an earlier form's CSRF token."""
    def post(token=None, **overrides):
        form = {"company_name": "Fjord Analytics AS", "contact_name": "Ingrid Dahl",
                "contact_email": "ingrid@fjord.example", "employee_count": "120",
                "message": "We would like our analysts to mentor.", "website": ""}
        form.update(overrides)
        form["csrf_token"] = token or auth.csrf_token("/apply")
        return client.post("/apply", data=form)

    return post
