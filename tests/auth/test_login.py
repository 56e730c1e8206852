import re


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
    assert "do not match an account" in message(wrong)
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


def test_repeated_failed_logins_are_rate_limited(client, auth, make_user):
    email = make_user("manager")
    statuses = [auth.login(email, password="wrong-password-x").status_code for _ in range(6)]
    assert statuses[:5] == [401] * 5
    assert statuses[5] == 429
    # The limit is per address too: the right password is refused until the window passes.
    limited = auth.login(email)
    assert limited.status_code == 429
    assert "Too many attempts" in limited.get_data(as_text=True)


def test_rate_limit_keys_hold_no_email_address(client, auth, make_user, ctx):
    email = make_user("manager")
    auth.login(email, password="wrong-password-x")
    keys = [k.decode() for k in ctx.redis.keys("*")]
    assert keys, "failed logins should be counted in Redis"
    assert not any(email in k or "acme" in k for k in keys)


def test_logout_requires_post_and_signs_out(client, auth, make_user):
    auth.login(make_user("manager"))
    assert client.get("/logout").status_code == 405
    response = auth.logout()
    assert response.status_code == 302
    assert client.get("/company").status_code == 302
