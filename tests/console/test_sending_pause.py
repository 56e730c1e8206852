"""Pausing sending from the console and the command line, and what /readyz says meanwhile: the real
app, database and Redis."""

from __future__ import annotations

import html
import time

import sqlalchemy as sa

from portal.core.heartbeat import beat
from portal.outbox.ground import pause
from tests.pages import csrf_from


def csrf(client):
    return csrf_from(client.get("/admin/outbox").get_data(as_text=True))


def audit(db):
    with db.read() as conn:
        return [
            tuple(row)
            for row in conn.execute(sa.text("SELECT scope, action, actor_user_id, reason FROM email_sending_pauses"))
        ]


def admin_id(db, email):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar_one()


def test_an_admin_pauses_all_sending_and_the_console_and_readyz_say_by_whom_and_why(client, admin, ctx):
    answer = client.post(
        "/admin/outbox/pause", data={"csrf_token": csrf(client), "family": "", "reason": "Provider incident 42"}
    )
    assert answer.status_code == 302
    page = html.unescape(client.get("/admin/outbox").get_data(as_text=True))
    assert "Paused: all sending." in page
    assert f"By {admin}" in page and "“Provider incident 42”" in page
    user_id = admin_id(ctx.db, admin)
    assert audit(ctx.db) == [("*", "pause", user_id, "Provider incident 42")]

    beat(ctx.redis, "host-a:1", now=time.time())
    ready = client.get("/readyz")
    assert ready.status_code == 200, "a pause is a decision, not a fault"
    assert ready.json["sending"] == {
        "paused": True,
        "pauses": [
            {
                "scope": "all",
                "by_user_id": user_id,
                "reason": "Provider incident 42",
                "since": ready.json["sending"]["pauses"][0]["since"],
            }
        ],
    }
    assert admin not in ready.get_data(as_text=True), "/readyz is public: no address"

    answer = client.post(
        "/admin/outbox/resume", data={"csrf_token": csrf(client), "family": "", "reason": "Incident over"}
    )
    assert answer.status_code == 302
    assert pause.pauses(ctx.redis) == []
    assert "Emails are being sent." in client.get("/admin/outbox").get_data(as_text=True)
    assert client.get("/readyz").json["sending"] == {"paused": False, "pauses": []}
    assert audit(ctx.db)[-1] == ("*", "resume", user_id, "Incident over")


def test_a_family_pause_is_named_and_bad_input_changes_nothing(client, admin, ctx):
    for form, status in (
        ({"family": "no_such_family", "reason": "why"}, 400),
        ({"family": "", "reason": ""}, 400),
        ({"family": "", "reason": "x" * 501}, 400),
    ):
        answer = client.post("/admin/outbox/pause", data={"csrf_token": csrf(client), **form})
        assert answer.status_code == status, form
    assert pause.pauses(ctx.redis) == [] and audit(ctx.db) == []

    client.post("/admin/outbox/pause", data={"csrf_token": csrf(client), "family": "campaign", "reason": "Typo"})
    assert "Paused: campaign emails." in html.unescape(client.get("/admin/outbox").get_data(as_text=True))
    again = client.post("/admin/outbox/pause", data={"csrf_token": csrf(client), "family": "campaign", "reason": "x"})
    assert again.status_code == 409
    assert len(audit(ctx.db)) == 1


def test_only_admins_pause(client, auth, make_user, ctx):
    auth.login(make_user("manager"))
    token = csrf_from(client.get("/account").get_data(as_text=True))
    answer = client.post("/admin/outbox/pause", data={"csrf_token": token, "family": "", "reason": "why"})
    assert answer.status_code in (302, 403, 404)
    assert pause.pauses(ctx.redis) == []


def test_the_command_line_pauses_and_resumes_with_a_reason(runner, ctx):
    paused = runner.invoke(args=["outbox", "pause", "--family", "notice", "--reason", "Bad template"])
    assert paused.exit_code == 0, paused.output
    assert "paused notice" in paused.output
    assert [(p.scope, p.actor_user_id, p.reason) for p in pause.pauses(ctx.redis)] == [("notice", None, "Bad template")]

    refused = runner.invoke(args=["outbox", "pause", "--family", "nope", "--reason", "x"])
    assert refused.exit_code != 0 and "Choose one of the email families offered." in refused.output
    missing = runner.invoke(args=["outbox", "resume", "--family", "notice"])
    assert missing.exit_code != 0
    assert len(pause.pauses(ctx.redis)) == 1

    resumed = runner.invoke(args=["outbox", "resume", "--family", "notice", "--reason", "Fixed"])
    assert resumed.exit_code == 0, resumed.output
    assert "resumed notice: 0 waiting emails published" in resumed.output
    assert pause.pauses(ctx.redis) == []
    assert audit(ctx.db) == [("notice", "pause", None, "Bad template"), ("notice", "resume", None, "Fixed")]
