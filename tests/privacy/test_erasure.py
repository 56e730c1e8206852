"""A person put into every table that can hold them, through the portal's own operations, then
erased: their address, name and tokens are nowhere (database file, Redis, logs), nor what others
wrote about them, even after a late receipt, a late complaint, a late lookup and a late attendance
record; and the company's report totals are what they were (or what the late correction made them)."""

from __future__ import annotations

import csv
import io
import json
import logging
import zipfile
from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa

from devtools.sqld import SqldServer, copy_data
from devtools.testing import redis_dump
from portal.account.operations import ask_for_password_reset, send_requested_reset_links
from portal.applications.operations import record_decision, submit_application
from portal.attendance.queries import company_attendance
from portal.auth.queries import load_user
from portal.campaigns import operations as campaigns
from portal.campaigns.sending import campaign_pass
from portal.core import clock, server_history
from portal.core.i18n import translate
from portal.core.periods import Period
from portal.demo.operations import request_demo
from portal.invitations import invite_manager
from portal.invitations import tokens as invitation_tokens
from portal.invitations.operations import accept_invitation, invite_colleagues
from portal.invitations.tokens import token_hash
from portal.outbox.hear.receipt_lookup import look_up_missing_receipts
from portal.outbox.hear.receipts import apply_receipt_event
from portal.privacy.operations import erase_person
from portal.reports.operations import issue_certificate
from portal.seed import seed_demo
from tests.attendance.conftest import sign
from tests.builders import event
from tests.pages import csrf_from

ADDRESS = "ada.erasable@acme.example"
NAME = "Ada Erasable"
MESSAGE = "Ada's own words about her team"
COMPANY = "Erasable Co"  # typed on her forms
NOTE = "Dear Ada, tell us first how many of your twelve would volunteer."  # an admin's, to her
SESSIONS = ("lang-ada-2", "lang-ada-3")  # the platform's session IDs carry her first name


@pytest.fixture
def settings(settings, provider_model):
    return settings.with_overrides(resend_api_url=provider_model.url)


@pytest.fixture
def accepted_long_ago(ctx, make_outbox_row, deliver):
    """An email to Ada the provider model accepted 49 hours ago, its receipt never come (the worker's
    lookup will ask about it); before anything bounced. Returns its row ID."""
    outbox_id = make_outbox_row(recipient=ADDRESS, publish=True)
    assert deliver(outbox_id) == "ack:sent"
    with ctx.db.write() as conn:
        conn.execute(
            sa.text("UPDATE email_outbox SET sent_at = :then WHERE id = :id"),
            {"id": outbox_id, "then": clock.iso_in(-49 * 3600)},
        )
    return outbox_id


@pytest.fixture
def ada(ctx, client, make_user, user_id, count, accepted_long_ago):
    """Ada in every table that can hold a person; returns the secrets that must vanish with her."""
    manager = load_user(ctx.db, user_id(make_user("manager", company="Acme Ltd")))
    admin_id = user_id(make_user("admin"))
    invite_colleagues(ctx, manager=manager, addresses=[ADDRESS], programme="language")
    with ctx.db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations WHERE email = :a"), {"a": ADDRESS}).scalar()
    token = invitation_tokens.token_for(ctx.settings.secret_key, nonce)
    ada_id = accept_invitation(ctx.db, token_hash=token_hash(token), name=NAME, password="ada-password-1")

    body = json.dumps(
        {
            "platform": "language",
            "sessions": [
                {
                    "session_id": f"lang-ada-{n}",
                    "volunteer_email": ADDRESS,
                    "held_at": f"2026-11-0{n}T17:00:00Z",
                    "minutes": 45,
                    "status": "attended",
                    "updated_at": "2026-11-09T18:00:00Z",
                }
                for n in (2, 3)
            ],
        }
    )
    assert (
        client.post(
            "/api/attendance", data=body, headers=sign(ctx.settings.attendance_webhook_secret, body)
        ).status_code
        == 200
    )

    application = submit_application(
        ctx, company_name=COMPANY, contact_name=NAME, contact_email=ADDRESS, employee_count=12, message=MESSAGE
    )
    record_decision(
        ctx, application_id=application.application_id, decision="request_info", note=NOTE, admin_user_id=admin_id
    )
    request_demo(ctx, name=NAME, email=ADDRESS, company=COMPANY, message=MESSAGE)
    campaign = campaigns.create_campaign(
        ctx.db,
        admin_id=admin_id,
        name="Autumn",
        subject="Autumn at TEEI",
        body="New sessions.",
        audience="language_volunteers",
    )
    campaigns.send(ctx, campaign_id=campaign, admin_id=admin_id, send_at=None)
    campaign_pass(ctx)
    campaigns.unsubscribe(ctx.db, user_id=ada_id, campaign_id=campaign)
    issue_certificate(
        ctx.db,
        user_id=ada_id,
        name=NAME,
        company_name="Acme Ltd",
        period=Period(date(2026, 1, 1), date(2026, 11, 30), ""),
        tz=ZoneInfo("Europe/Oslo"),
        today=date(2026, 12, 1),
        now=clock.iso(clock.utcnow()),
    )
    ask_for_password_reset(ctx.db, email=ADDRESS, now=clock.utcnow())
    send_requested_reset_links(ctx, now=clock.utcnow())
    token_page = client.get("/login").get_data(as_text=True)
    client.post("/login", data={"email": ADDRESS, "password": "a-wrong-guess", "csrf_token": csrf_from(token_page)})

    # The invitation went out and bounced: a receipt, and the address on the suppression list.
    with ctx.db.write() as conn:
        invitation_email = conn.execute(
            sa.text(
                "UPDATE email_outbox SET status = 'sent', provider_message_id = 're_ada' "
                "WHERE recipient = :a AND family = 'invitation' RETURNING id"
            ),
            {"a": ADDRESS},
        ).scalar()
    bounce = event(
        "email.bounced", email_id="re_ada", to=ADDRESS, outbox_id=invitation_email, bounce={"type": "Permanent"}
    )
    apply_receipt_event(
        ctx.db, "msg_ada_bounce", json.dumps(bounce).encode(), environment="development", now=clock.utcnow()
    )

    for table, where in [
        ("users", "email = :a"),
        ("company_memberships", "user_id = :id"),
        ("invitations", "email = :a"),
        ("attendance_sessions", "volunteer_email = :a"),
        ("company_applications", "contact_email = :a"),
        ("demo_submissions", "email = :a"),
        ("demo_leads", "email = :a"),
        ("campaign_recipients", "email = :a"),
        ("campaign_unsubscribes", "user_id = :id"),
        ("password_resets", "user_id = :id"),
        ("volunteer_certificates", "user_id = :id"),
        ("password_reset_requests", "1 = 1"),
        ("login_failures", "1 = 1"),
        ("email_outbox", "recipient = :a"),
        ("email_receipts", "outbox_id = :outbox"),
        ("email_suppressions", "email = :a"),
        ("email_suppression_events", "email = :a"),
    ]:
        params = {"a": ADDRESS, "id": ada_id, "outbox": invitation_email}
        with ctx.db.read() as conn:
            held = conn.execute(sa.text(f"SELECT COUNT(*) FROM {table} WHERE {where}"), params).scalar()
        # password_reset_requests is emptied by its pass: it held her address until then.
        assert held or table == "password_reset_requests", f"Ada is not in {table}"
    with ctx.db.read() as conn:
        demo_key = conn.execute(sa.text("SELECT replay_key FROM demo_submissions")).scalar()
    return {
        "id": ada_id,
        "secrets": [ADDRESS, NAME, MESSAGE, token, nonce, COMPANY, NOTE, demo_key, *SESSIONS],
        "company": manager.company_id,
        "manager": manager.email,
    }


@pytest.fixture
def awaiting_receipts(ctx, ada):
    """Ada's password reset link, accepted by the provider, its receipts still to come (and the email
    accepted long ago, that the worker's lookup will ask about). Returns the reset email's row ID."""
    with ctx.db.write() as conn:
        reset_email = conn.execute(
            sa.text(
                "UPDATE email_outbox SET status = 'sent', provider_message_id = 're_ada_reset', sent_at = :now "
                "WHERE recipient = :a AND family = 'password_reset' RETURNING id"
            ),
            {"a": ADDRESS, "now": clock.now_iso()},
        ).scalar()
    return reset_email


def late_news(ctx, client, reset_email):
    """After the erasure: a delivery receipt and a complaint for the reset link, the worker's lookup,
    and the platform's correction of one of Ada's sessions (45 minutes were 60)."""
    for number, (kind, data) in enumerate([("email.delivered", {}), ("email.complained", {})]):
        receipt = event(kind, email_id="re_ada_reset", to=ADDRESS, outbox_id=reset_email, **data)
        apply_receipt_event(
            ctx.db,
            f"msg_ada_late_{number}",
            json.dumps(receipt).encode(),
            environment="development",
            now=clock.utcnow(),
        )
    assert look_up_missing_receipts(ctx, now=clock.utcnow()).learned == 1
    correction = {
        "session_id": SESSIONS[0],
        "volunteer_email": ADDRESS,
        "held_at": "2026-11-02T17:00:00Z",
        "minutes": 60,
        "status": "attended",
        "updated_at": "2026-11-20T09:00:00Z",
    }
    body = json.dumps({"platform": "language", "sessions": [correction]})
    answer = client.post("/api/attendance", data=body, headers=sign(ctx.settings.attendance_webhook_secret, body))
    assert answer.json == {"received": 1, "applied": 1, "unmatched": 0, "stale": 0}


def erase_by_the_page_then_late_news(ctx, client, auth, make_user, ada, reset_email) -> None:
    """An admin erases Ada through the privacy page; then the late receipts, lookup and correction."""
    minutes_before = company_attendance(ctx.db, company_id=ada["company"]).minutes
    auth.login(make_user("admin"))
    page = client.post(
        "/admin/privacy",
        data={"email": ADDRESS, "csrf_token": csrf_from(client.get("/admin/privacy").get_data(as_text=True))},
    )
    token = csrf_from(page.get_data(as_text=True))
    confirm = client.post("/admin/privacy/erase", data={"email": ADDRESS, "csrf_token": token})
    assert "This cannot be undone" in confirm.get_data(as_text=True)
    done = client.post("/admin/privacy/erase", data={"email": ADDRESS, "csrf_token": token, "confirmed": "yes"})
    assert done.status_code == 302
    assert "Erased." in client.get("/admin/privacy").get_data(as_text=True)

    assert company_attendance(ctx.db, company_id=ada["company"]).minutes == minutes_before == 90
    late_news(ctx, client, reset_email)
    assert company_attendance(ctx.db, company_id=ada["company"]).minutes == 105  # the correction counted


def assert_nowhere(ada, **places: str) -> None:
    for secret in ada["secrets"]:
        for place, text in places.items():
            assert secret.lower() not in text.lower(), f"{secret!r} is still in the {place}"


def test_an_erased_person_is_nowhere_and_the_report_keeps_its_hours(
    ctx, client, auth, make_user, ada, awaiting_receipts, settings, caplog
):
    caplog.set_level(logging.DEBUG)
    erase_by_the_page_then_late_news(ctx, client, auth, make_user, ada, awaiting_receipts)
    ctx.db.dispose()  # every connection closed: what is on disk is all there is
    database = Path(settings.database_url.split(":///", 1)[1])
    stored = b"".join(path.read_bytes() for path in database.parent.glob(database.name + "*"))
    assert_nowhere(ada, database=stored.decode("latin-1"), redis=redis_dump(ctx.redis), logs=caplog.text)
    with ctx.db.read() as conn:
        audit = conn.execute(sa.text("SELECT action, pseudonym, actor_user_id FROM privacy_events")).all()
    assert [row.action for row in audit] == ["erase"] and audit[0].pseudonym.endswith("@erased.invalid")


def test_a_read_open_in_another_thread_does_not_keep_her_in_the_write_ahead_log(ctx, ada, make_user, user_id, settings):
    """The web server runs threads: an erasure while another request of the same process reads
    still empties the log once that read ends (SQLite's own wait for readers would keep the
    driver's hold on Python, so the read could not end, and the log kept her pages)."""
    import threading
    import time

    admin = user_id(make_user("admin"))
    reading = threading.Event()

    def slow_read():
        with ctx.db.read() as conn:
            conn.execute(sa.text("SELECT COUNT(*) FROM users")).scalar()
            reading.set()
            time.sleep(0.5)  # a request still reading while the erasure commits

    reader = threading.Thread(target=slow_read)
    reader.start()
    assert reading.wait(10)
    erase(ctx, ADDRESS, admin)
    reader.join()
    log = Path(settings.database_url.split(":///", 1)[1] + "-wal")
    assert log.stat().st_size == 0, "the write-ahead log was emptied after the read ended"


class TestOnALibsqlServer:
    """The same on a libSQL server of the portal's own (sqld): once its history is purged
    (docs/deploy.md) no file of its data directory holds her: not the database, its write-ahead
    log, the replication log or a snapshot."""

    @pytest.fixture
    def on_server(self, tmp_path, sqld_template, sqld_keys):
        # Its replication log compacts into snapshots every second, as production's does hourly.
        server = SqldServer(copy_data(sqld_template, tmp_path / "server"), sqld_keys, log_seconds=1).start()
        yield server
        server.stop()

    @pytest.fixture
    def settings(self, settings, on_server):
        return settings.with_overrides(database_url=on_server.database_url())

    def test_an_erased_person_is_in_no_file_of_the_server_once_its_history_is_purged(
        self, ctx, client, auth, make_user, ada, awaiting_receipts, on_server, caplog
    ):
        caplog.set_level(logging.DEBUG)
        erase_by_the_page_then_late_news(ctx, client, auth, make_user, ada, awaiting_receipts)
        ctx.db.dispose()
        on_server.stop()
        stored = b"".join(path.read_bytes() for path in on_server.data_dir.rglob("*") if path.is_file())
        assert ADDRESS.encode() in stored, "before the purge the server still holds her (free space, logs)"

        server_history.purge(on_server.data_dir)

        for name, path in sorted(
            (str(p.relative_to(on_server.data_dir)), p) for p in on_server.data_dir.rglob("*") if p.is_file()
        ):
            assert_nowhere(ada, **{name: path.read_bytes().decode("latin-1")})
        assert_nowhere(ada, redis=redis_dump(ctx.redis), logs=caplog.text)
        on_server.start()
        assert company_attendance(ctx.db, company_id=ada["company"]).minutes == 105, "every other row is there"


def test_a_bounced_address_stays_suppressed_after_its_erasure(ctx, client, auth, make_user, ada, user_id, count):
    auth.login(make_user("admin"))
    token = csrf_from(client.get("/admin/privacy").get_data(as_text=True))
    client.post("/admin/privacy/erase", data={"email": ADDRESS, "csrf_token": token, "confirmed": "yes"})
    assert count("email_suppressions", "email = :a", a=ADDRESS) == 0
    # Months later a manager invites the same address again: the portal still refuses to email it.
    manager = load_user(ctx.db, user_id(make_user("manager", company="Acme Ltd")))
    invite_colleagues(ctx, manager=manager, addresses=[ADDRESS], programme="language")
    assert count("email_suppressions", "email = :a", a=ADDRESS) == 1


def test_a_person_downloads_what_the_portal_holds_and_it_is_recorded(ctx, client, auth, ada, count):
    auth.login(ADDRESS, "ada-password-1")
    page = client.get("/account").get_data(as_text=True)
    answer = client.post("/account/data", data={"csrf_token": csrf_from(page)})
    assert answer.status_code == 200 and answer.mimetype == "application/zip"
    assert ADDRESS not in answer.headers["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(answer.data))
    names = set(archive.namelist())
    assert {"README.txt", "attendance.json", "attendance.csv", "emails.json", "invitations.csv"} <= names
    attendance = json.loads(archive.read("attendance.json"))
    assert sorted(session["minutes"] for session in attendance) == [45, 45]
    assert json.loads(archive.read("account.json"))[0]["name"] == NAME
    assert {email["family"] for email in json.loads(archive.read("emails.json"))} >= {"invitation", "password_reset"}
    (certificate,) = json.loads(archive.read("certificates.json"))  # the one she made, as it verifies
    assert certificate["certificate_id"].startswith("TEEI-C-") and certificate["minutes"] == 90
    assert (certificate["period_start"], certificate["period_end"]) == ("2026-01-01", "2026-11-30")
    everything = b"".join(archive.read(name) for name in names).decode()
    assert "password_hash" not in everything and ada["secrets"][3] not in everything  # no hash, no token
    assert count("privacy_events", "action = 'download'") == 1

    # Every CSV opens in a spreadsheet with its columns named, an empty part too (she took no decisions).
    def table(name):
        return list(csv.reader(io.StringIO(archive.read(f"{name}.csv").decode())))

    for name in (n.removesuffix(".csv") for n in names if n.endswith(".csv")):
        rows = table(name)
        assert rows and rows[0], f"{name}.csv has no header row"
        assert len(rows) == 1 + len(json.loads(archive.read(f"{name}.json"))), name
        if len(rows) > 1:  # the header names what the rows hold, the engine's parts included
            assert rows[0] == list(json.loads(archive.read(f"{name}.json"))[0]), name
    assert table("decisions_taken") == [["application", "decision", "note", "created_at"]]
    # A receipt is one readable line, its kept fields in columns of their own (no JSON in a cell).
    receipts = table("receipts")
    assert receipts[0] == [
        "outbox_id",
        "type",
        "event_created_at",
        "received_at",
        "outcome",
        "to",
        "bounce_type",
        "bounce_subtype",
        "provider_message_id",
    ]
    (bounced,) = [dict(zip(receipts[0], row, strict=True)) for row in receipts[1:]]
    assert (bounced["type"], bounced["to"], bounced["bounce_type"]) == ("email.bounced", ADDRESS, "Permanent")
    assert bounced["provider_message_id"] == "re_ada"
    assert not any("{" in cell for cell in bounced.values())
    readme = archive.read("README.txt").decode()
    assert "Each CSV file starts with a row that names its columns" in readme
    assert "email.bounced: your mail server refused it" in readme


def erase(ctx, address, actor):
    erasure = erase_person(ctx, address=address, actor_user_id=actor, now=clock.utcnow(), holds_data=True)
    assert erasure.done
    return erasure


def test_what_others_wrote_about_her_goes_with_her(ctx, ada, make_user, user_id):
    erase(ctx, ADDRESS, user_id(make_user("admin")))
    with ctx.db.read() as conn:
        assert conn.execute(sa.text("SELECT note FROM application_decisions")).scalars().all() == [""]
        assert conn.execute(sa.text("SELECT company_name FROM company_applications")).scalars().all() == [""]
        assert conn.execute(sa.text("SELECT company FROM demo_submissions")).scalars().all() == [""]
        assert conn.execute(sa.text("SELECT company FROM demo_leads")).scalars().all() == [""]
        kept_key = conn.execute(sa.text("SELECT replay_key FROM demo_submissions")).scalar()
    assert kept_key not in ada["secrets"]


def test_the_export_names_none_of_her_sessions_after_her_erasure(ctx, client, auth, ada, make_user, user_id):
    erase(ctx, ADDRESS, user_id(make_user("admin")))
    auth.login(ada["manager"])
    export = client.get("/reports/export.csv?from=2026-11-01&to=2026-11-30&programme=all").get_data(as_text=True)
    assert "Former volunteer" in export  # her hours are there...
    assert not [session for session in SESSIONS if session in export]  # ...under no ID with her name


def test_an_erased_managers_name_leaves_the_invitations_they_sent(ctx, make_user, user_id, company_id):
    """Hers to colleagues (in English and Norwegian) name a colleague instead; an admin's to a manager
    keeps naming the partnerships team when the admin is erased."""
    inviter = make_user("manager", company="Acme Ltd")
    with ctx.db.write() as conn:
        conn.execute(sa.text("UPDATE users SET name = 'Maja Inviter' WHERE email = :e"), {"e": inviter})
    manager = load_user(ctx.db, user_id(inviter))
    invite_colleagues(ctx, manager=manager, addresses=["one@acme.example"], programme="language")
    invite_colleagues(ctx, manager=manager, addresses=["two@acme.example"], programme="language", language="nb")
    admin = make_user("admin")
    invite_manager(
        ctx,
        company_id=company_id("Acme Ltd"),
        email="three@acme.example",
        inviter_id=user_id(admin),
        inviter_name="The TEEI partnerships team",
    )
    erase(ctx, inviter, user_id(admin))
    erase(ctx, admin, user_id(make_user("admin")))

    with ctx.db.read() as conn:
        named = dict(
            conn.execute(sa.text("SELECT recipient, template_input ->> '$.inviter_name' FROM email_outbox")).all()
        )
        everything = " ".join(str(tuple(row)) for row in conn.execute(sa.text("SELECT * FROM email_outbox")))
    assert named == {
        "one@acme.example": "A colleague",
        "two@acme.example": translate("nb", "A colleague"),
        "three@acme.example": "The TEEI partnerships team",
    }
    assert "Maja" not in everything


def test_the_demo_seed_does_not_make_an_erased_demo_account_again(ctx, make_user, user_id, settings, count):
    seed_demo(ctx.db, secret_key=settings.secret_key)
    users, heidi = count("users"), "heidi@northwind.example"
    erase(ctx, heidi, user_id(make_user("admin")))
    erase(ctx, "manager@northwind.example", user_id(make_user("admin")))
    logins = seed_demo(ctx.db, secret_key=settings.secret_key)  # the next `make run`
    assert count("users") == users + 2  # the two admins who erased; nobody made again
    assert count("users", "email IN (:h, :m)", h=heidi, m="manager@northwind.example") == 0
    assert [email for email, _, _ in logins] == ["admin@teei.example"]
    # Her sessions, brought again by the seed as a platform would, went to her pseudonym.
    assert count("attendance_sessions", "volunteer_email = :h OR session_id LIKE '%heidi%'", h=heidi) == 0
