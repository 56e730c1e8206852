"""What every form accepts (issue 14, findings 1, 2 and 8): text only, no control characters, clear 400s."""

from __future__ import annotations

import importlib
import inspect
import io
import pkgutil

import pytest
import sqlalchemy as sa
from flask_wtf import FlaskForm

import portal
from portal.applications import operations as application_operations
from portal.auth.queries import load_user
from portal.demo import operations as demo_operations
from portal.invitations import operations as invitation_operations
from portal.invitations import tokens
from portal.web.forms import FILES_REFUSED, PortalForm

APPLICATION = {
    "company_name": "Fjord Analytics AS",
    "contact_name": "Ingrid Dahl",
    "contact_email": "ingrid@fjord.example",
    "employee_count": "120",
    "message": "We would like our analysts to mentor.",
    "website": "",
}
DEMO = {"name": "Sofia Reyes", "email": "sofia@lumen.example", "company": "Lumen Retail", "message": "", "website": ""}


@pytest.fixture
def post_application(client, auth):
    def post(**overrides):
        return client.post("/apply", data={**APPLICATION, **overrides, "csrf_token": auth.csrf_token("/apply")})

    return post


@pytest.fixture
def signed_in(auth, make_user):
    def sign_in(role):
        auth.login(make_user(role, company="Acme Ltd"))

    return sign_in


@pytest.fixture
def forms(ctx, db, user_id, make_user):
    """(page that carries the form, path it posts to, its text fields with good values, role or None)."""
    fields = {key: value for key, value in APPLICATION.items() if key != "website"}
    application = application_operations.submit_application(ctx, **{**fields, "employee_count": 120})
    manager = load_user(db, user_id(make_user("manager", company="Acme Ltd")))
    invitation_operations.invite_colleagues(ctx, manager=manager, addresses=["new@acme.example"], programme="language")
    with db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations")).scalar_one()
    accept = tokens.ACCEPT_PATH + tokens.token_for(ctx.settings.secret_key, nonce)
    decision = f"/admin/applications/{application.application_id}"
    return [
        ("/login", "/login", {"email": "a@acme.example", "password": "correct-horse-battery"}, None),
        ("/apply", "/apply", APPLICATION, None),
        ("/demo", "/demo", DEMO, None),
        (accept, accept, {"name": "Nina", "password": "correct-horse-battery"}, None),
        ("/invitations/new", "/invitations/new", {"emails": "x@acme.example", "programme": "language"}, "manager"),
        ("/admin/suppressions/", "/admin/suppressions/", {"email": "x@acme.example", "reason": "asked"}, "admin"),
        (decision, decision + "/decision", {"decision": "decline", "note": "No.", "decisions_seen": "0"}, "admin"),
    ]


def test_a_text_field_sent_as_a_file_is_answered_400_with_a_message_on_every_form(
    client, auth, signed_in, forms, count
):
    for page, target, fields, role in forms:
        if role:
            signed_in(role)
        for name in fields:
            data = {**fields, name: (io.BytesIO(b"not text"), "field.txt"), "csrf_token": auth.csrf_token(page)}
            response = client.post(target, data=data, content_type="multipart/form-data")
            assert response.status_code == 400, (target, name, response.status_code)
            assert FILES_REFUSED in response.get_data(as_text=True), (target, name)
        if role:
            auth.logout()
    assert count("company_applications") == 1  # the one the fixture made
    assert count("demo_submissions") == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("company_name", "Acme\x00 Evil Corp"),
        ("contact_name", "\x1b[31mIngrid\x1b[0m"),
        ("contact_name", "Ingrid\nBcc: everyone@example.org"),
        ("message", "Hello\x07 there"),
    ],
)
def test_control_characters_are_refused_with_a_message_and_nothing_is_stored(post_application, count, field, value):
    response = post_application(**{field: value})
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "Remove the invisible control characters" in page or "Keep this answer on one line" in page
    assert count("company_applications") == 0


def test_line_breaks_and_tabs_are_kept_in_multi_line_fields(post_application, db):
    response = post_application(message="First line\n\tindented second line")
    assert response.status_code == 302
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT message FROM company_applications")).scalar_one() == (
            "First line\n\tindented second line"
        )


def test_the_operations_refuse_a_nul_whoever_calls_them(ctx, count):
    fields = {"name": "Sofia Reyes", "email": "sofia@lumen.example", "company": "Lumen\x00 Retail", "message": ""}
    with pytest.raises(demo_operations.DemoRequestError, match="control characters"):
        demo_operations.request_demo(ctx, **fields)
    assert count("demo_submissions") == 0


@pytest.mark.parametrize("typed", ["²", "١٢٠", "12.5", "-3"])
def test_an_employee_count_that_is_not_plain_digits_gets_a_message(post_application, count, typed):
    response = post_application(employee_count=typed)
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "Enter a whole number, like 250." in page and "invalid literal" not in page
    assert "of at least 1" not in page, "one message for one mistake"
    assert count("company_applications") == 0


def test_every_form_in_the_portal_is_a_portal_form():
    offenders = []
    for module_info in pkgutil.walk_packages(portal.__path__, "portal."):
        module = importlib.import_module(module_info.name)
        for name, member in inspect.getmembers(module, inspect.isclass):
            if issubclass(member, FlaskForm) and member.__module__ == module.__name__ and member is not PortalForm:
                if not issubclass(member, PortalForm):
                    offenders.append(f"{module.__name__}.{name}")
    assert offenders == [], "forms must inherit portal.web.forms.PortalForm"
