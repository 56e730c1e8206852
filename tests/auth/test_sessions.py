"""Sessions end server-side (issue 14, finding 4): a copied cookie stops working at sign-out."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


def _session_cookie(client) -> str:
    return client.get_cookie("session").value


def test_a_session_cookie_replayed_after_sign_out_is_signed_out(app, client, auth, make_user):
    auth.login(make_user("manager"))
    copied = _session_cookie(client)
    assert client.get("/reports").status_code == 200
    auth.logout()

    replay = app.test_client()
    replay.set_cookie("session", copied)
    response = replay.get("/reports")
    assert response.status_code == 302 and response.headers["Location"].startswith("/login")


def test_signing_out_on_one_device_ends_the_other_devices_sessions(app, make_user):
    from tests.conftest import AuthActions

    email = make_user("manager")
    laptop, phone = app.test_client(), app.test_client()
    AuthActions(laptop).login(email)
    AuthActions(phone).login(email)
    AuthActions(laptop).logout()
    assert phone.get("/reports").status_code == 302


def test_end_all_sessions_signs_the_account_out_everywhere_and_a_new_sign_in_works(
    client, auth, make_user, user_id, db
):
    from portal.auth.operations import end_all_sessions

    email = make_user("manager")
    auth.login(email)
    with db.write() as conn:
        end_all_sessions(conn, user_id(email))  # what a password change or reset does
    assert client.get("/reports").status_code == 302
    auth.login(email)
    assert client.get("/reports").status_code == 200


def test_other_accounts_keep_their_sessions(app, make_user):
    from tests.conftest import AuthActions

    leaving, staying = app.test_client(), app.test_client()
    AuthActions(leaving).login(make_user("manager"))
    AuthActions(staying).login(make_user("manager"))
    AuthActions(leaving).logout()
    assert staying.get("/reports").status_code == 200


def test_a_signed_in_session_lasts_hours_not_a_month(client, auth, make_user):
    response = auth.login(make_user("manager"))
    cookie = response.headers["Set-Cookie"]
    expires = parsedate_to_datetime(cookie.split("Expires=")[1].split(";")[0])
    hours_left = (expires - datetime.now(UTC)).total_seconds() / 3600
    assert 1 <= hours_left <= 12.1
