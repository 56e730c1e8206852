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
from tests.pages import csrf_from

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


# Issue 47, item 7: every form a person types into, sent with bad input, answers as GOV.UK's design
# system does (its "Error message", "Error summary" and "Validation" patterns): an error summary at
# the top (role=alert, focused on load, each entry a link to its field's id), each message next to
# its field (described by it, marked invalid), the page's title prefixed "Error: ", and what was
# typed kept, but passwords. The forms are found as above, by walking every page of every role;
# the two forms no GET shows (the sign-in's password step, the reset link's page) are added.

BAD = "\u200b"  # a zero-width space: PortalForm refuses it in every field but a password
TYPED = ("text", "email", "search", "tel", "url", "number", "password")


class ErrorPage(HTMLParser):
    """What a refused form's page shows: its title, every element's id, the error summary's links,
    each control's value and ARIA, and which element ids are field errors."""

    def __init__(self):
        super().__init__()
        self.title, self._in_title = "", False
        self.ids, self.field_errors, self.controls = {}, set(), {}
        self.summary, self.summary_links, self._summary_depth, self._depth = None, [], None, 0
        self._textarea = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._depth += tag not in ("input", "br", "meta", "link", "img", "hr")
        if tag == "title":
            self._in_title = True
        if "id" in attrs:
            self.ids[attrs["id"]] = tag
        if "field-error" in (attrs.get("class") or "").split() and "id" in attrs:
            self.field_errors.add(attrs["id"])
        if "error-summary" in (attrs.get("class") or "").split():
            self.summary, self._summary_depth = attrs, self._depth
        if tag == "a" and self._summary_depth is not None:
            self.summary_links.append(attrs.get("href", ""))
        if tag in ("input", "textarea", "select") and "name" in attrs:
            self.controls.setdefault(attrs["name"], {**attrs, "tag": tag, "value": attrs.get("value", "")})
            if tag == "textarea":
                self._textarea = attrs["name"]

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        if tag == "textarea":
            self._textarea = None
        if self._summary_depth is not None and self._depth == self._summary_depth and tag == "div":
            self._summary_depth = None
        self._depth -= tag not in ("input", "br", "meta", "link", "img", "hr")

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._textarea:
            control = self.controls[self._textarea]
            # HTML drops a textarea's first line break (WTForms writes one before the text).
            text = control.get("text", "") + data
            control["value"] = control["text"] = text.removeprefix("\r\n").removeprefix("\n")


class TypedForms(PageForms):
    """PageForms, also noting which fields a person types into (and which are passwords)."""

    def handle_starttag(self, tag, attrs):
        super().handle_starttag(tag, attrs)
        attrs = dict(attrs)
        if tag == "form":
            self.forms[-1]["typed"], self.forms[-1]["passwords"] = {}, set()
            self.forms[-1]["buttons"] = []
        if not self.forms:
            return
        form = self.forms[-1]
        if tag == "button" or (tag == "input" and attrs.get("type") == "submit"):
            if (attrs.get("type") or "submit") == "submit":
                form["buttons"].append(attrs.get("class") or "")
                if "name" in attrs and "clicked" not in form:  # a person clicks the first button
                    form["clicked"] = {attrs["name"]: attrs.get("value", "")}
        if "name" not in attrs:
            return
        if attrs.get("tabindex") == "-1" and tag == "input":  # a honeypot: no person fills it in
            form["fields"][attrs["name"]] = ""
            return
        kind = attrs.get("type", "text") if tag == "input" else tag
        if tag == "textarea" or (tag == "input" and kind in TYPED):
            if kind == "password":
                form["passwords"].add(attrs["name"])
                form["typed"][attrs["name"]] = "x"  # too short, or not the password: refused
            else:
                value = form["fields"].get(attrs["name"]) or "Walk"
                form["typed"][attrs["name"]] = value[:2] + BAD + value[2:]


def _refused_form_problems(where: str, answer, sent: dict[str, str], passwords: set[str]) -> list[str]:
    """What is missing from the page answering a form sent with bad input, as GOV.UK's patterns ask."""
    if not 200 <= answer.status_code < 300 and answer.status_code not in (400, 401, 422):
        return [f"{where}: answered {answer.status_code}, not the form again with its errors"]
    page = ErrorPage()
    page.feed(answer.get_data(as_text=True))
    problems = []
    if not page.title.strip().startswith("Error: "):
        problems.append(f"{where}: the title {page.title.strip()!r} does not start with 'Error: '")
    summary = page.summary or {}
    if summary.get("role") != "alert" or "autofocus" not in summary or summary.get("tabindex") != "-1":
        problems.append(f"{where}: no error summary (role=alert, tabindex=-1, focused on load) at the top")
    if not page.summary_links:
        problems.append(f"{where}: the error summary links to no field")
    for href in page.summary_links:
        if not href.startswith("#") or page.ids.get(href[1:]) not in ("input", "select", "textarea", "ul", "fieldset"):
            problems.append(f"{where}: the summary links to {href!r}, which is no field on the page")
    refused = [name for name, control in page.controls.items() if control.get("aria-invalid") == "true"]
    for name in refused:
        control = page.controls[name]
        described = (control.get("aria-describedby") or "").split()
        if not set(described) & page.field_errors:
            problems.append(f"{where}: {name}'s error is not next to it (aria-describedby names no field error)")
        if f"#{control.get('id')}" not in page.summary_links:
            problems.append(f"{where}: {name}'s error is not in the summary")
    if not refused:
        problems.append(f"{where}: no field is marked invalid (aria-invalid)")
    for name, value in sent.items():
        control = page.controls.get(name)
        if control is None:
            problems.append(f"{where}: {name} is gone from the page")
        elif name in passwords:
            if control.get("value"):
                problems.append(f"{where}: the password {name} came back filled in")
        elif control["value"] != value:
            problems.append(f"{where}: {name} came back as {control['value']!r}, not as typed {value!r}")
    return problems


def _forms_on(answer) -> list[dict]:
    parser = TypedForms()
    parser.feed(answer.get_data(as_text=True))
    return [form for form in parser.forms if form["method"] == "post" and form["typed"]]


def test_every_form_refused_shows_the_error_summary_the_errors_by_their_fields_and_what_was_typed(
    app, client, auth, walk_world, ask_reset, reset_links
):
    emails, values = walk_world
    problems, walked = [], []

    def send(where, path, form):
        """Post the form as shown, bad input in every field a person types into, and check the answer."""
        target = urljoin(path, form["action"] or path)
        sent = dict(form["typed"])
        walked.append(f"{where} → {target}")
        problems.extend(
            _refused_form_problems(
                walked[-1],
                client.post(target, data={**form["fields"], **form.get("clicked", {}), **sent}),
                sent,
                form["passwords"],
            )
        )
        if not any({"button"} <= set(classes.split()) - {"secondary"} for classes in form["buttons"]):
            problems.append(f"{walked[-1]}: its submit button is not a primary button ({form['buttons']})")

    for path, role in _walked_pages(app, values):
        auth.logout()
        if role:
            auth.login(emails[role])
        page = client.get(path)
        if page.status_code == 200 and page.mimetype == "text/html":
            for form in _forms_on(page):
                send(f"{role or 'visitor'} {path}", path, form)
                page = client.get(path)  # a fresh page (and CSRF token) for the next form
    auth.logout()
    # The two forms no GET shows: the sign-in's password step, after the address ...
    token = csrf_from(client.get("/login").get_data(as_text=True))
    for form in _forms_on(client.post("/login", data={"email": emails["manager"], "csrf_token": token})):
        send("visitor /login (password step)", "/login", form)
    # ... and the page a reset link opens.
    ask_reset(emails["employee"])
    opened = client.get(reset_links(emails["employee"])[-1])
    for form in _forms_on(client.get(opened.location)):
        send("visitor /password/reset", opened.location, form)
    print("forms walked with bad input:\n" + "\n".join(walked))
    assert problems == [], "forms that do not answer bad input as GOV.UK's patterns do:\n" + "\n".join(problems)
    # Every form people fill in, from each area: a page the walk missed would pass unseen.
    reached = " ".join(walked)
    for expected in (
        "/login",
        "(password step)",
        "/password/forgot",
        "/password/reset",
        "/apply",
        "/demo",
        "/account",
        "/reports/settings",
        "/invitations/new",
        "/people/managers/new",
        "/admin/suppressions/",
    ):
        assert f" {expected} " in f" {reached} ", f"the walk never reached {expected}"
