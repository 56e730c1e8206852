"""Builders for application tests: a submitted application and a recorded decision, through the operations."""

from __future__ import annotations

import pytest

from portal.applications import operations


@pytest.fixture
def submit(ctx):
    """Builder: submit an application through the operation; returns the Submission."""

    def make(**overrides):
        fields = {
            "company_name": "Fjord Analytics AS",
            "contact_name": "Ingrid Dahl",
            "contact_email": "ingrid@fjord.example",
            "employee_count": 120,
            "message": "We would like our analysts to mentor.",
        }
        return operations.submit_application(ctx, **{**fields, **overrides})

    return make


@pytest.fixture
def admin_id(make_user, user_id):
    return user_id(make_user("admin"))


@pytest.fixture
def decide(ctx, admin_id):
    """Builder: record an admin's decision through the operation; returns the DecisionOutcome."""

    def make(application_id, decision, note="", **kwargs):
        kwargs.setdefault("admin_user_id", admin_id)
        return operations.record_decision(ctx, application_id=application_id, decision=decision, note=note, **kwargs)

    return make


@pytest.fixture
def post_application(client, auth):
    """Builder: POST the public form as a browser would; `token` replays an earlier form's CSRF token."""

    def post(token=None, **overrides):
        form = {
            "company_name": "Fjord Analytics AS",
            "contact_name": "Ingrid Dahl",
            "contact_email": "ingrid@fjord.example",
            "employee_count": "120",
            "message": "We would like our analysts to mentor.",
            "website": "",
        }
        form.update(overrides)
        form["csrf_token"] = token or auth.csrf_token("/apply")
        return client.post("/apply", data=form)

    return post
