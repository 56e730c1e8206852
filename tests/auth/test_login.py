import re
from datetime import timedelta

import sqlalchemy as sa

from portal.auth import throttle
from portal.core import clock
from tests.conftest import PASSWORD, AuthActions


def test_login_lands_manager_on_the_report(client, auth, make_user):
    email = make_user("manager", company="Acme Ltd")
    response = auth.login(email)
    assert response.status_code == 302
    assert response.headers["Location"] == "/"
    page = client.get("/", follow_redirects=True)
    assert "<h1>Volunteering report</h1>" in page.get_data(as_text=True) and "Acme Ltd" in page.get_data(as_text=True)


def test_wrong_password_and_unknown_email_answered_alike(client, auth, make_user):
    email = make_user("manager")
    wrong = auth.login(email, password="not-the-password")
    unknown = auth.login("nobody@nowhere.example", password="not-the-password")
    assert wrong.status_code == unknown.status_code == 401

    def message(response):
        return re.search(r'<div class="error-summary".*?</div>', response.get_data(as_text=True), re.S).group(0)

    assert message(wrong) == message(unknown)
    assert "Wrong email or password." in message(wrong)
    with client.session_transaction() as s:
        assert "_user_id" not in s


def test_post_without_csrf_token_is_refused(client, make_user):
    email = make_user("manager")
    response = client.post("/login", data={"email": email, "password": "correct-horse-battery"})
    assert response.status_code == 400
    assert "Form expired" in response.get_data(as_text=True)


def test_anonymous_request_redirected_to_login(client):
    response = client.get("/company")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/login?next=")


def test_session_cookie_is_httponly_and_lax(client, auth, make_user):
    response = auth.login(make_user("manager"))
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_repeated_failed_logins_from_one_client_are_rate_limited(client, auth, make_user):
    email = make_user("manager")
    statuses = [auth.login(email, password="wrong-password-x").status_code for _ in range(6)]
    assert statuses[:5] == [401] * 5
    assert statuses[5] == 429
    limited = auth.login(email)
    assert limited.status_code == 429
    assert "Too many attempts" in limited.get_data(as_text=True)


def test_failures_from_others_do_not_lock_the_owner_out(app, client, auth, make_user):
    email = make_user("manager")
    for network_address, attempts in (("10.0.0.1", 5), ("10.0.0.2", 2)):  # a guesser on two clients
        guesser = app.test_client()
        guesser.environ_base["REMOTE_ADDR"] = network_address
        for _ in range(attempts):
            assert AuthActions(guesser).login(email, password="wrong-password-x").status_code == 401
    owner = app.test_client()
    owner.environ_base["REMOTE_ADDR"] = "10.0.0.9"
    assert AuthActions(owner).login(email).status_code == 302


def test_failures_per_address_slow_down_and_never_lock_out():
    delays = [throttle.delay_after(failures) for failures in range(12)]
    assert delays[: throttle.FREE_FAILURES] == [0.0] * throttle.FREE_FAILURES
    assert delays == sorted(delays) and 0 < delays[throttle.FREE_FAILURES] < delays[-1]
    assert max(delays) <= throttle.MAX_DELAY_SECONDS


# Sign-in while Redis is away runs in real processes: e2e/test_redis_outage.py (the limiter is one
# object per process, so an outage in this process would carry on into the next test's app).


def test_failure_counts_hold_no_address_and_a_window_ends(client, auth, make_user, db):
    email = make_user("manager")
    for _ in range(3):
        auth.login(email, password="wrong-password-x")
    with db.read() as conn:
        rows = conn.execute(sa.text("SELECT address_hash, failures FROM login_failures")).all()
    assert [row.failures for row in rows] == [3] and email not in rows[0].address_hash
    later = clock.utcnow() + timedelta(seconds=throttle.WINDOW_SECONDS + 1)
    assert throttle.recent_failures(db, email, now=later) == 0
    throttle.record_failure(db, email, now=later)
    assert throttle.recent_failures(db, email, now=later) == 1
    assert auth.login(email).status_code == 302
    assert throttle.recent_failures(db, email, now=later) == 0  # the owner is in: failures forgotten


def test_rate_limit_keys_hold_no_email_address(client, auth, make_user, ctx):
    email = make_user("manager")
    auth.login(email, password="wrong-password-x")
    keys = [k.decode() for k in ctx.redis.keys("*")]
    assert keys, "failed logins should be counted per client in Redis"
    assert not any(email in k or "acme" in k for k in keys)


def test_logout_requires_post_and_signs_out(client, auth, make_user):
    auth.login(make_user("manager"))
    assert client.get("/logout").status_code == 405
    response = auth.logout()
    assert response.status_code == 302
    assert client.get("/company").status_code == 302


def test_sign_in_follows_next_only_within_the_site(client, auth, make_user):
    email = make_user("manager")

    def lands_after_sign_in(next_value):
        token = auth.csrf_token()
        response = client.post(
            "/login",
            query_string={"next": next_value},
            data={"email": email, "password": PASSWORD, "csrf_token": token},
        )
        assert response.status_code == 302
        location = response.headers["Location"]
        client.post("/logout", data={"csrf_token": auth.csrf_token("/")})
        return location

    assert lands_after_sign_in("/company?tab=people") == "/company?tab=people"
    # Browsers read "\" as "/" and drop tabs and newlines: each of these would leave the site.
    for elsewhere in (
        "//evil.example",
        "/\\evil.example",
        "/\t/evil.example",
        "/\n/evil.example",
        "https://evil.example/",
    ):
        assert lands_after_sign_in(elsewhere) == "/", elsewhere


def test_a_guesser_hopping_addresses_in_one_ipv6_64_is_one_client(app, make_user):
    """An IPv6 subscriber holds a whole /64: counting per address there would stop nobody."""
    email = make_user("manager")

    def attempt(network_address):
        guesser = app.test_client()
        guesser.environ_base["REMOTE_ADDR"] = network_address
        return AuthActions(guesser).login(email, password="wrong-password-x").status_code

    assert [attempt(f"2001:db8:1:2::{n}") for n in range(1, 6)] == [401] * 5
    assert attempt("2001:db8:1:2:ffff:ffff:ffff:ffff") == 429  # the same /64
    assert attempt("2001:db8:1:3::1") == 401  # the next /64 is another client
