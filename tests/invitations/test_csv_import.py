"""The invitations page's CSV import of colleagues: what it will do first, then, confirmed, the invitations."""

from __future__ import annotations

import html
import io
import re

import sqlalchemy as sa

from portal.invitations.tokens import token_for
from tests.pages import csrf_from

EXCEL = "\ufeffNavn;E-post;Avdeling\r\nAda Lovelace;Ada@Acme.example;Engineering\r\nBo Berg;bo@acme.example;Sales\r\n"


def upload(client, content: bytes | str, programme="language"):
    data = content.encode() if isinstance(content, str) else content
    token = csrf_from(client.get("/invitations/import").get_data(as_text=True))
    return client.post(
        "/invitations/import",
        data={
            "file": (io.BytesIO(data), "colleagues.csv"),
            "programme": programme,
            "language": "en",
            "csrf_token": token,
        },
        content_type="multipart/form-data",
    )


def confirm(client, preview):
    page = preview.get_data(as_text=True)
    fields = dict(re.findall(r'<input[^>]*name="(colleagues|programme|language)"[^>]*value="([^"]*)"', page))
    fields = {name: html.unescape(value) for name, value in fields.items()}
    return client.post("/invitations/import/confirm", data={**fields, "csrf_token": csrf_from(page)})


def invitations(db):
    with db.read() as conn:
        return [
            tuple(r) for r in conn.execute(sa.text("SELECT email, name, department FROM invitations ORDER BY email"))
        ]


def test_an_excel_file_is_previewed_then_invited_with_departments(client, auth, manager, make_user, db, outbox_rows):
    make_user("employee", company="Acme Ltd", email="cy@acme.example")
    auth.login(manager.email)
    content = (
        EXCEL + "Cy Member;cy@acme.example;Ops\r\nNo Address;not-an-address;Ops\r\nAda Again;ada@acme.example;\r\n"
    )

    preview = upload(client, content)

    assert preview.status_code == 200
    page = html.unescape(preview.get_data(as_text=True))
    assert "2 colleagues will be invited to TEEI Language" in page
    assert "Has an account: nothing sent" in page
    assert "Line 5: “not-an-address” is not a valid email address." in page
    assert "Line 6: The same address as line 2." in page
    assert invitations(db) == [] and outbox_rows() == [], "nothing before the manager confirms"

    done = confirm(client, preview)

    assert done.status_code == 302
    assert invitations(db) == [
        ("ada@acme.example", "Ada Lovelace", "Engineering"),
        ("bo@acme.example", "Bo Berg", "Sales"),
    ]
    assert sorted(row["recipient"] for row in outbox_rows()) == ["ada@acme.example", "bo@acme.example"]


def test_a_comma_file_without_a_heading_is_read_as_name_email_department(client, auth, manager, db):
    auth.login(manager.email)
    confirm(client, upload(client, "Ada Lovelace,ada@acme.example,Engineering\n"))
    assert invitations(db) == [("ada@acme.example", "Ada Lovelace", "Engineering")]


def test_a_file_that_is_not_utf8_is_refused_with_the_way_to_save_it(client, auth, manager, db):
    auth.login(manager.email)
    refused = upload(client, "Åse;ase@acme.example;Økonomi\n".encode("cp1252"))
    assert refused.status_code == 400 and "CSV UTF-8" in html.unescape(refused.get_data(as_text=True))
    assert invitations(db) == []


def test_a_changed_preview_sends_nothing(client, auth, manager, db):
    auth.login(manager.email)
    page = upload(client, EXCEL).get_data(as_text=True)
    forged = '[["X", "not an address", ""]]'
    answer = client.post(
        "/invitations/import/confirm",
        data={"colleagues": forged, "programme": "language", "language": "en", "csrf_token": csrf_from(page)},
    )
    assert answer.status_code == 302 and invitations(db) == []


def test_the_department_goes_with_the_invitation_to_the_account_and_the_people_page(client, auth, manager, db, ctx):
    auth.login(manager.email)
    confirm(client, upload(client, EXCEL))
    auth.logout()
    with db.read() as conn:
        nonce = conn.execute(sa.text("SELECT token_nonce FROM invitations WHERE email = 'ada@acme.example'")).scalar()
    client.get(f"/invitations/accept/{token_for(ctx.settings.secret_key, nonce)}")
    accept = client.get("/invitations/accept").get_data(as_text=True)
    client.post(
        "/invitations/accept", data={"name": "Ada", "password": "a-long-password", "csrf_token": csrf_from(accept)}
    )
    with db.read() as conn:
        assert (
            conn.execute(sa.text("SELECT department FROM users WHERE email = 'ada@acme.example'")).scalar()
            == "Engineering"
        )
    auth.logout()
    auth.login(manager.email)
    assert "Engineering" in client.get("/people").get_data(as_text=True)


def test_only_the_import_takes_a_file(client, auth, manager):
    auth.login(manager.email)
    token = csrf_from(client.get("/invitations/new").get_data(as_text=True))
    answer = client.post(
        "/invitations/new",
        data={"emails": (io.BytesIO(b"ada@acme.example"), "a.txt"), "programme": "language", "csrf_token": token},
        content_type="multipart/form-data",
    )
    assert answer.status_code == 400
