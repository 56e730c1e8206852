from portal.auth import throttle
from portal.core import clock
from tests.pages import csrf_from


def save_account(client, **fields):
    token = csrf_from(client.get("/account").get_data(as_text=True))
    return client.post("/account", data={"csrf_token": token, **fields})


def test_a_person_changes_their_name(client, auth, make_user):
    auth.login(make_user("employee"))
    response = save_account(client, name="Grace Hopper")
    assert response.status_code == 302
    page = client.get("/account").get_data(as_text=True)
    assert "Your name is saved." in page and "Grace Hopper" in page


def test_a_person_changes_their_password_with_the_current_one(client, auth, make_user):
    email = make_user("manager")
    auth.login(email)
    response = save_account(client, name="Ada", current_password="correct-horse-battery", new_password="new-password-1")
    assert response.status_code == 302
    auth.logout()
    assert auth.login(email, "correct-horse-battery").status_code == 401
    assert auth.login(email, "new-password-1").status_code == 302


def test_a_wrong_current_password_changes_nothing(client, auth, make_user, db, user_id):
    email = make_user("manager")
    auth.login(email)
    response = save_account(
        client, name="Someone Else", current_password="wrong-password", new_password="new-password-1"
    )
    assert response.status_code == 400 and "current password is not right" in response.get_data(as_text=True)
    auth.logout()
    assert auth.login(email).status_code == 302
    assert "Someone Else" not in client.get("/account").get_data(as_text=True)


def test_a_new_password_needs_the_current_one(client, auth, make_user):
    auth.login(make_user("employee"))
    response = save_account(client, name="Ada", new_password="new-password-1")
    assert response.status_code == 400 and "Enter your current password" in response.get_data(as_text=True)


def test_changing_the_password_closes_open_reset_links(client, auth, make_user, ask_reset, reset_links, set_password):
    email = make_user("employee")
    ask_reset(email)
    (link,) = reset_links(email)
    auth.login(email)
    save_account(client, name="Ada", current_password="correct-horse-battery", new_password="new-password-1")
    auth.logout()
    assert set_password(link, "attacker-password").status_code == 410


def test_the_account_page_needs_a_sign_in(client):
    assert client.get("/account").status_code == 302


def test_a_password_change_keeps_this_browser_and_ends_the_others(app, client, auth, make_user):
    from tests.conftest import AuthActions

    email = make_user("manager")
    other_browser = app.test_client()
    AuthActions(other_browser).login(email)
    assert other_browser.get("/account").status_code == 200
    auth.login(email)

    save_account(client, name="Ada", current_password="correct-horse-battery", new_password="new-password-1")

    assert client.get("/account").status_code == 200, "the browser that changed it stays signed in"
    assert other_browser.get("/account").status_code == 302, "every other session ended"


def test_guesses_at_the_current_password_are_limited_like_sign_in(client, auth, make_user, db):
    email = make_user("manager")
    auth.login(email)
    statuses = [
        save_account(client, name="Ada", current_password=f"guess-{n}", new_password="new-password-1").status_code
        for n in range(6)
    ]
    assert statuses == [400] * 5 + [429]
    # The guesses count against the address as failed sign-ins do: the next sign-in there waits.
    assert throttle.recent_failures(db, email, now=clock.utcnow()) == 5
