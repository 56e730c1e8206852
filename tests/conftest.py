"""Fixtures for tests/: the app, its PortalContext (`ctx`), and one way to read, count and make rows."""

from __future__ import annotations

import itertools
import json
import threading

import pytest
import sqlalchemy as sa
from werkzeug.serving import make_server

from devtools.provider_model import ProviderModel
from portal import create_app
from portal.account.operations import send_requested_reset_links
from portal.account.tokens import token_for
from portal.auth.operations import create_user
from portal.core import clock
from portal.email_families import FAMILIES
from portal.outbox import EmailIntent
from portal.outbox.ground.queues import build_envelope
from portal.outbox.send.consumer import handle_message, use_context
from portal.outbox.send.rate_limit import PAUSE_KEY
from portal.outbox.write.intents import add_outbox_rows
from portal.outbox.write.publish import publish_outbox_rows
from portal.web.extensions import EXTENSION_KEY
from tests.pages import csrf_from

PASSWORD = "correct-horse-battery"


@pytest.fixture
def app(settings):
    app = create_app({"TESTING": True}, settings=settings)
    yield app
    app.extensions[EXTENSION_KEY].db.dispose()


@pytest.fixture
def ctx(app):
    """The app's PortalContext: settings, db, redis, provider, families (tests/outbox overrides it)."""
    return app.extensions[EXTENSION_KEY]


@pytest.fixture
def db(ctx):
    return ctx.db


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def count(db):
    """count(table, where="1=1", **params): rows in a table, read from the test's database."""

    def count(table, where="1=1", **params):
        with db.read() as conn:
            return conn.execute(sa.text(f"SELECT COUNT(*) FROM {table} WHERE {where}"), params).scalar_one()

    return count


@pytest.fixture
def outbox_rows(db):
    """outbox_rows(**column_values): the matching outbox rows as dicts, oldest first."""

    def read(**filters):
        where = " AND ".join(f"{column} = :{column}" for column in filters) or "1=1"
        with db.read() as conn:
            return [
                dict(row)
                for row in conn.execute(
                    sa.text(f"SELECT * FROM email_outbox WHERE {where} ORDER BY created_at, rowid"), filters
                ).mappings()
            ]

    return read


@pytest.fixture
def outbox_row(db):
    """outbox_row(id): that outbox row as a dict (fails if there is none)."""

    def read(outbox_id):
        with db.read() as conn:
            return dict(
                conn.execute(sa.text("SELECT * FROM email_outbox WHERE id = :id"), {"id": outbox_id}).mappings().one()
            )

    return read


@pytest.fixture
def make_outbox_row(ctx):
    """Builder: make one outbox row and return its ID. Two modes:

    - make_outbox_row(recipient=..., family="notice", data=..., key=..., publish=False): an intent
      committed through the engine (add_outbox_rows), left `pending` as the domain transaction
      leaves it, or published (`enqueued`) with publish=True. A notice unless `family` names another.
    - make_outbox_row(status="sent", provider_message_id="re_msg_1", **columns): the same row, then
      put in the given state, as receipt tests need it. Giving a status or any column selects this
      mode; the status defaults to sent and the provider's message ID to "re_msg_1", the email_id
      of tests.builders.event(). Columns may include `id` to choose the row's ID.
    """
    counter = itertools.count(1)

    def make(status=None, *, recipient=None, family="notice", data=None, key=None, publish=False, **columns):
        n = next(counter)
        intent = EmailIntent(
            family=FAMILIES[family],
            recipient=recipient or f"person{n}@example.org",
            idempotency_key=key or f"test:{family}:{n}",
            data=data or {"subject": f"Notice {n}", "body": "Hello.\n\nSecond paragraph."},
        )
        with ctx.db.write() as conn:
            (outbox_id,) = add_outbox_rows(conn, [intent], ctx.settings, now=clock.utcnow())
            if status is not None or columns:
                state = {"status": status or "sent", "provider_message_id": "re_msg_1", **columns}
                assignments = ", ".join(f"{column} = :{column}" for column in state)
                conn.execute(
                    sa.text(f"UPDATE email_outbox SET {assignments} WHERE id = :row_id"), {**state, "row_id": outbox_id}
                )
                outbox_id = state.get("id", outbox_id)
        if publish:
            publish_outbox_rows(ctx.db, ctx.redis, [outbox_id], now=clock.utcnow())
        return outbox_id

    return make


@pytest.fixture
def make_user(db):
    """Builder: make_user(role, company=...) creates a login and returns its email."""
    counter = iter(range(1, 10_000))

    def make(role="manager", company="Acme Ltd", email=None, password=PASSWORD):
        email = email or f"{role}{next(counter)}@{company.split()[0].lower() if company else 'teei'}.example"
        create_user(db, email=email, password=password, role=role, company=company if role != "admin" else None)
        return email

    return make


@pytest.fixture
def user_id(db):
    """user_id(email): the ID of the login with that address."""

    def find(email):
        with db.read() as conn:
            return conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar_one()

    return find


class AuthActions:
    def __init__(self, client):
        self._client = client

    def csrf_token(self, path="/login"):
        return csrf_from(self._client.get(path, follow_redirects=True).get_data(as_text=True))

    def login(self, email, password=PASSWORD):
        token = self.csrf_token()
        return self._client.post("/login", data={"email": email, "password": password, "csrf_token": token})

    def logout(self):
        # /login: a form when signed out (the public home page has none), the signed-in home otherwise.
        token = self.csrf_token("/login")
        return self._client.post("/logout", data={"csrf_token": token})


@pytest.fixture
def auth(client):
    return AuthActions(client)


@pytest.fixture
def admin(auth, make_user):
    """An admin, signed in on `client`; returns the address."""
    email = make_user("admin")
    auth.login(email)
    return email


@pytest.fixture
def deliver(ctx):
    """deliver(outbox_id, attempt=1, now=None): one delivery through the real consumer in this process
    (with the engine's context set, as a worker sets it), at `now` (the wall clock's by default); returns
    its decision."""

    def run(outbox_id, attempt=1, now=None):
        return handle_message(
            ctx, build_envelope(outbox_id), attempt=attempt, dead_letter=False, now=now or clock.utcnow()
        )

    use_context(ctx)
    yield run
    use_context(None)


@pytest.fixture
def company_id(db):
    """company_id(name): the ID of the company with that name."""

    def find(name):
        with db.read() as conn:
            return conn.execute(sa.text("SELECT id FROM companies WHERE name = :n"), {"n": name}).scalar_one()

    return find


@pytest.fixture
def live_portal(app):
    """The app served over real HTTP on a free loopback port, for the provider model to call."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-portal", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join()


@pytest.fixture
def make_due(ctx):
    """make_due(outbox_id): time passes: the row's retry time has come, and any pause the provider's
    rate-limit headers asked for is over."""

    def make_due(outbox_id):
        ctx.redis.delete(PAUSE_KEY)
        with ctx.db.write() as conn:
            conn.execute(
                sa.text("UPDATE email_outbox SET next_attempt_at = :past WHERE id = :id"),
                {"id": outbox_id, "past": clock.iso_in(-1)},
            )

    return make_due


@pytest.fixture
def provider_model():
    """The Resend-compatible provider model on a free port; tests point the SDK at it."""
    model = ProviderModel(port=0).start()
    yield model
    model.stop()


@pytest.fixture
def ask_reset(client, ctx):
    """ask_reset(email): submit the forgot-password form as a visitor, then run the worker's pass
    that sends the link; returns the form's response."""

    def ask(email):
        token = csrf_from(client.get("/password/forgot").get_data(as_text=True))
        answer = client.post("/password/forgot", data={"email": email, "csrf_token": token})
        send_requested_reset_links(ctx, now=clock.utcnow())
        return answer

    return ask


@pytest.fixture
def reset_links(outbox_rows, ctx):
    """reset_links(email): the reset links emailed to that address, oldest first, as the worker renders them."""

    def links(email):
        return [
            f"/password/reset/{token_for(ctx.settings.secret_key, json.loads(row['template_input'])['token_nonce'])}"
            for row in outbox_rows(family="password_reset", recipient=email)
        ]

    return links
