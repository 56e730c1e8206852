"""What every form accepts (issue 14, findings 1, 2 and 8): text only, no control characters, clear 400s."""

from __future__ import annotations

import importlib
import inspect
import io
import pkgutil
from html.parser import HTMLParser
from urllib.parse import urljoin

import pytest
import sqlalchemy as sa
from flask_wtf import FlaskForm
from wtforms import RadioField, SelectField
from wtforms.fields.choices import SelectChoice, SelectFieldBase
from wtforms.validators import DataRequired

import portal
from portal.applications import operations as application_operations
from portal.auth.queries import load_user
from portal.demo import operations as demo_operations
from portal.invitations import operations as invitation_operations
from portal.invitations import tokens
from portal.web.forms import CHOOSE_OFFERED, FILES_REFUSED, HIDDEN_CHARACTERS, PortalForm

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


@pytest.mark.parametrize("hidden", ["\u200b", "\u202e"])
def test_every_form_refuses_characters_that_hide_or_reorder_text_in_every_field(
    client, auth, signed_in, forms, count, hidden
):
    """What one person types, another reads (names, company names, messages, notes, the names pasted
    with addresses): a zero-width space or a right-to-left override in any field is refused."""
    for page, target, fields, role in forms:
        if role:
            signed_in(role)
        for name, value in fields.items():
            if name in ("password", "website"):  # hashed, never shown; the honeypot answers bots as accepted
                continue
            data = {**fields, name: value[:2] + hidden + value[2:], "csrf_token": auth.csrf_token(page)}
            response = client.post(target, data=data)
            assert HIDDEN_CHARACTERS in response.get_data(as_text=True).replace("&#39;", "'"), (target, name)
        if role:
            auth.logout()
    assert count("company_applications") == 1  # the one the fixture made
    assert count("demo_submissions") == 0 and count("application_decisions") == 0
    assert count("invitations") == 1 and count("invitations", "accepted_at IS NOT NULL") == 0
    assert count("email_suppressions") == 0


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


def test_an_account_name_that_hides_or_reorders_text_is_refused_whoever_creates_it(db, count):
    from portal.auth.operations import AccountError, create_user

    for name in ("Ada\u200b Lovelace", "\u202eecalevoL adA"):
        with pytest.raises(AccountError, match="invisible characters"):
            create_user(
                db, email="ada@acme.example", password="correct-horse-battery", role="admin", company=None, name=name
            )
    assert count("users") == 0


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


# Issue 26, item 1: every choice (select, radio) on every page, posted empty and with a value it
# does not offer, answers a field error on that field, never a 500. The pages are found by walking
# the app's routes, so a new page's forms are covered without editing this test; a route whose URL
# takes a value the walk cannot fill fails below until a value is added to `values`.

UNKNOWN = "no-such-choice"
FILLED = {"email": "walk@acme.example", "password": "correct-horse-battery-staple", "number": "5", "date": "2026-11-01"}


class PageForms(HTMLParser):
    """The forms of a page: method, action, every field's default, and each choice with its options."""

    def __init__(self):
        super().__init__()
        self.forms, self._select, self._textarea = [], None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append(
                {
                    "method": (attrs.get("method") or "get").lower(),
                    "action": attrs.get("action"),
                    "fields": {},
                    "choices": {},
                    "required": set(),
                }
            )
        if not self.forms or "name" not in attrs:
            if tag == "option" and self._select:
                self._option(attrs)
            return
        form, name = self.forms[-1], attrs["name"]
        if tag == "select":
            self._select = name
            form["choices"][name] = []
            if "required" in attrs:
                form["required"].add(name)
        elif tag == "textarea":
            form["fields"][name] = "Walk"
        elif tag == "input":
            kind = attrs.get("type", "text")
            if kind == "radio":
                form["choices"].setdefault(name, []).append(attrs.get("value", "on"))
                if "checked" in attrs or name not in form["fields"]:
                    form["fields"][name] = attrs.get("value", "on")
            elif kind == "checkbox":
                if "checked" in attrs:
                    form["fields"][name] = attrs.get("value", "y")
            elif kind not in ("submit", "button", "reset", "file", "image"):
                form["fields"][name] = attrs.get("value") or FILLED.get(kind, "" if kind == "hidden" else "Walk")

    def _option(self, attrs):
        form = self.forms[-1]
        value = attrs.get("value", "")
        form["choices"][self._select].append(value)
        if "selected" in attrs or (self._select not in form["fields"] and value):
            form["fields"][self._select] = value

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None


@pytest.fixture
def walk_world(ctx, db, make_user, user_id, company_id, make_outbox_row):
    """Someone of each role, and one of each thing a page's URL names."""
    from portal.campaigns import operations as campaign_operations

    emails = {role: make_user(role, company="Acme Ltd") for role in ("admin", "manager", "employee")}
    fields = {key: value for key, value in APPLICATION.items() if key != "website"}
    application = application_operations.submit_application(ctx, **{**fields, "employee_count": 120})
    manager = load_user(db, user_id(emails["manager"]))
    invitation_operations.invite_colleagues(ctx, manager=manager, addresses=["new@acme.example"], programme="language")
    with db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations")).scalar_one()
    campaign = campaign_operations.create_campaign(
        db, admin_id=user_id(emails["admin"]), name="Walk", subject="Walk", body="Walk", audience="all_managers"
    )
    demo = demo_operations.request_demo(ctx, name="Walk", email="walk@example.org", company="Walk", message="")
    values = {
        "application_id": application.application_id,
        "campaign_id": campaign,
        "company_id": company_id("Acme Ltd"),
        "user_id": user_id(emails["employee"]),
        "outbox_id": make_outbox_row(),
        "invitation_id": 1,
        "submission_id": demo.submission_id,
        "token": tokens.token_for(ctx.settings.secret_key, nonce),
        "report_id": "TEEI-1-20250101-20251231-0000ABCD",  # the verify page: no such filing, and no form
    }
    return emails, values


def _walked_pages(app, values):
    """(path, role or None) of every page a GET answers, with its URL's values filled in."""
    pages, missing = [], []
    for rule in app.url_map.iter_rules():
        view = app.view_functions[rule.endpoint]
        access = getattr(view, "access", None)
        if "GET" not in rule.methods or access is None or "." in rule.rule.rsplit("/", 1)[-1]:
            continue  # static files, and exports (.csv, .pdf, ...) which carry no form
        unfilled = rule.arguments - set(values)
        if unfilled:
            missing.append(f"{rule.rule}: {sorted(unfilled)}")
            continue
        path = rule.build({name: values[name] for name in rule.arguments}, append_unknown=False)[1]
        role = None if access == "public" else next(r for r in ("admin", "manager", "employee") if r in access)
        pages.append((path, role))
    assert missing == [], "give the walk a value for these URL parts"
    return pages


def test_every_choice_on_every_page_answers_a_field_error_when_empty_or_unknown(app, client, auth, walk_world):
    emails, values = walk_world
    walked, refused, problems = set(), [], []
    for path, role in _walked_pages(app, values):
        auth.logout()
        if role:
            auth.login(emails[role])
        page = client.get(path)
        if page.status_code != 200 or page.mimetype != "text/html":
            continue
        parser = PageForms()
        parser.feed(page.get_data(as_text=True))
        for form in parser.forms:
            target = urljoin(path, form["action"] or path)
            for name, offered in form["choices"].items():
                walked.add(name)
                for bad in ("", UNKNOWN):
                    if bad == "" and (form["method"] == "get" or "" in offered) and name not in form["required"]:
                        continue  # an offered "any", or a filter left empty: its default
                    data = {**form["fields"], name: bad}
                    if form["method"] == "post":
                        answer = client.post(target, data=data)
                    else:
                        answer = client.get(target, query_string=data)
                    text = answer.get_data(as_text=True)
                    shown = answer.status_code in (200, 400) and ("field-error" in text or "error-summary" in text)
                    if answer.status_code in (302, 303) and not shown:
                        # Refused with a message on the page it returns to (a form on a page of its own).
                        shown = "flash-error" in client.get(answer.location).get_data(as_text=True)
                    refused.append((path, name, bad))
                    if answer.status_code >= 500 or not shown:
                        problems.append(
                            f"{path} → {form['method'].upper()} {target} {name}={bad!r}: {answer.status_code}"
                        )
    assert problems == [], "a bad choice must be a field error:\n" + "\n".join(problems)
    # The walk reached every choice field a form class declares (a form on no walked page is not tested).
    declared = {
        field_name
        for form_class in _portal_form_classes()
        for field_name, unbound in vars(form_class).items()
        if getattr(unbound, "field_class", None) and issubclass(unbound.field_class, SelectFieldBase)
    }
    # The unsubscribe page takes a campaign's token, not the invitation's the walk fills `token` with:
    # its topic choices are refused, field error and nothing written, in tests/campaigns/test_streams.py
    # (test_a_topic_not_on_the_list_refuses_the_whole_form).
    tested_elsewhere = {"topics"}
    assert declared - walked - tested_elsewhere == set(), "a form's choice was on no page the walk reached"
    assert len(refused) >= 2 * len(declared)


def _portal_form_classes():
    for module_info in pkgutil.walk_packages(portal.__path__, "portal."):
        module = importlib.import_module(module_info.name)
        for _, member in inspect.getmembers(module, inspect.isclass):
            if issubclass(member, PortalForm) and member.__module__ == module.__name__:
                yield member


class _ChoiceForm(PortalForm):
    class Meta:
        csrf = False

    # validate_choice=False and no check of its own: the rule in PortalForm is all that stands guard.
    colour = SelectField(
        "Colour", choices=[SelectChoice("", "Choose a colour"), SelectChoice("red", "Red")], validate_choice=False
    )
    size = SelectField(
        "Size",
        choices=[SelectChoice("", "Choose"), SelectChoice("s", "Small")],
        validate_choice=False,
        validators=[DataRequired("Pick a size.")],
    )
    shape = RadioField("Shape", choices=[SelectChoice("round", "Round"), SelectChoice("square", "Square")])


@pytest.mark.parametrize(
    ("posted", "errors"),
    [
        ({"colour": "red", "size": "s", "shape": "round"}, {}),
        ({"colour": "", "size": "s", "shape": "round"}, {}),  # "" is offered and the field is optional
        ({"colour": "blue", "size": "s", "shape": "round"}, {"colour": [CHOOSE_OFFERED]}),
        ({"colour": "red", "size": "", "shape": "round"}, {"size": ["Pick a size."]}),
        ({"colour": "red", "size": "xl", "shape": "round"}, {"size": [CHOOSE_OFFERED]}),
        ({"colour": "red", "size": "s"}, {"shape": [CHOOSE_OFFERED]}),
        ({"colour": "red", "size": "s", "shape": "oval"}, {"shape": [CHOOSE_OFFERED]}),
    ],
)
def test_a_choice_not_offered_is_one_clear_field_error_whatever_the_field_says(app, posted, errors):
    with app.test_request_context("/", method="POST", data=posted):
        form = _ChoiceForm()
        assert form.validate() is (not errors)
        assert {name: messages for name, messages in form.errors.items() if messages} == errors
