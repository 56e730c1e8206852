import json
import re

import sqlalchemy as sa

from portal.account.operations import RESETS_PER_ADDRESS_PER_HOUR, send_requested_reset_links
from portal.core import clock
from portal.email_families import FAMILIES
from tests.pages import csrf_from, decoded_session

NEW_PASSWORD = "a-brand-new-password"


def test_the_answer_is_the_same_whether_or_not_the_address_has_an_account(client, ask_reset, make_user, count):
    email = make_user("employee")
    known, unknown = ask_reset(email), ask_reset("nobody@example.org")
    assert known.status_code == unknown.status_code == 302
    assert known.headers["Location"] == unknown.headers["Location"]
    known_page = client.get(known.headers["Location"]).get_data(as_text=True)
    assert "If an account uses that address" in known_page
    assert count("email_outbox", "family = 'password_reset'") == 1
    assert count("email_outbox", "recipient = 'nobody@example.org'") == 0


def test_a_reset_link_sets_the_password_once(client, auth, ask_reset, reset_links, set_password, make_user):
    email = make_user("manager")
    ask_reset(email)
    (link,) = reset_links(email)
    response = set_password(link, NEW_PASSWORD)
    assert response.status_code == 302 and response.headers["Location"].endswith("/login")
    assert auth.login(email, "correct-horse-battery").status_code == 401
    assert auth.login(email, NEW_PASSWORD).status_code == 302
    auth.logout()
    again = set_password(link, "yet-another-password")
    assert again.status_code == 410 and "has been used" in again.get_data(as_text=True)
    assert auth.login(email, NEW_PASSWORD).status_code == 302


def test_the_token_leaves_the_address_bar_after_the_first_visit(client, ask_reset, reset_links, make_user):
    email = make_user("employee")
    ask_reset(email)
    (link,) = reset_links(email)
    response = client.get(link)
    assert response.status_code == 302 and response.headers["Location"] == "/password/reset"
    assert "Choose a new password" in client.get("/password/reset").get_data(as_text=True)
    # Nor is it in the session cookie, which is signed but readable by whoever holds it.
    token = link.rsplit("/", 1)[1]
    cookie = client.get_cookie("session").value
    assert token not in decoded_session(cookie)


def test_a_newer_link_closes_the_older_one(ask_reset, reset_links, set_password, make_user):
    email = make_user("employee")
    ask_reset(email)
    ask_reset(email)
    first, second = reset_links(email)
    assert set_password(first, NEW_PASSWORD).status_code == 410
    assert set_password(second, NEW_PASSWORD).status_code == 302


def test_an_expired_link_sets_nothing(db, auth, ask_reset, reset_links, set_password, make_user):
    email = make_user("employee")
    ask_reset(email)
    (link,) = reset_links(email)
    with db.write() as conn:
        conn.execute(sa.text("UPDATE password_resets SET expires_at = '2020-01-01T00:00:00.000000Z'"))
    response = set_password(link, NEW_PASSWORD)
    assert response.status_code == 410 and "has expired" in response.get_data(as_text=True)
    assert auth.login(email).status_code == 302  # the old password still works


def test_an_unknown_link_is_refused(client, set_password):
    response = set_password("/password/reset/not-a-real-token", NEW_PASSWORD)
    assert response.status_code == 404 and "don't recognise" in response.get_data(as_text=True)


def test_a_short_password_is_refused_and_the_link_still_works(ask_reset, reset_links, set_password, make_user):
    email = make_user("employee")
    ask_reset(email)
    (link,) = reset_links(email)
    refused = set_password(link, "short")
    assert refused.status_code == 400 and "at least 10 characters" in refused.get_data(as_text=True)
    assert set_password(link, NEW_PASSWORD).status_code == 302


def test_one_address_gets_at_most_a_few_links_an_hour(ask_reset, reset_links, make_user, redis_server):
    email = make_user("employee")
    for _ in range(RESETS_PER_ADDRESS_PER_HOUR + 2):
        redis_server.client().flushall()  # past the per-client limit: only the per-address cap remains
        assert ask_reset(email).status_code == 302
    assert len(reset_links(email)) == RESETS_PER_ADDRESS_PER_HOUR


def test_one_client_is_slowed_down_after_a_few_requests(ask_reset):
    answers = [ask_reset(f"someone{n}@example.org").status_code for n in range(6)]
    assert answers == [302] * 5 + [429]


def test_a_deactivated_account_gets_no_link(db, ask_reset, make_user, user_id, count):
    email = make_user("employee")
    with db.write() as conn:
        conn.execute(
            sa.text("UPDATE users SET deactivated_at = '2026-01-01T00:00:00.000000Z' WHERE email = :e"), {"e": email}
        )
    assert ask_reset(email).status_code == 302
    assert count("password_resets") == 0


def test_the_email_carries_the_link_and_the_stored_input_does_not(ctx, ask_reset, outbox_rows, reset_links, make_user):
    email = make_user("employee")
    ask_reset(email)
    (row,) = outbox_rows(family="password_reset")
    (link,) = reset_links(email)
    token = link.rsplit("/", 1)[1]
    assert token not in row["template_input"]
    rendered = FAMILIES["password_reset"].render(json.loads(row["template_input"]), ctx.settings, now=clock.utcnow())
    assert f"{ctx.settings.public_base_url}{link}" in rendered.text and "60 minutes" in rendered.text
    assert rendered.subject == "Reset your TEEI Partner Portal password"


def test_the_login_page_links_to_the_reset(client):
    assert 'href="/password/forgot"' in client.get("/login").get_data(as_text=True)


def test_the_form_does_the_same_work_for_a_known_and_an_unknown_address(app, client, make_user, db, count, ctx):
    """The timing of the answer cannot tell who has an account: both write one request, nothing else."""
    email = make_user("employee")
    statements = {}
    for address in (email, "nobody@example.org"):
        seen = statements[address] = []

        def listener(conn, cursor, sql, *args, seen=seen):
            seen.append(sql.split()[0].upper())

        token = csrf_from(client.get("/password/forgot").get_data(as_text=True))
        sa.event.listen(db.engine, "before_cursor_execute", listener)
        try:
            client.post("/password/forgot", data={"email": address, "csrf_token": token})
        finally:
            sa.event.remove(db.engine, "before_cursor_execute", listener)
    assert statements[email] == statements["nobody@example.org"] and "INSERT" in statements[email]
    assert count("email_outbox", "family = 'password_reset'") == 0 and count("password_reset_requests") == 2

    send_requested_reset_links(ctx, now=clock.utcnow())
    # The pass answered both requests and kept neither address: only the account's email remains.
    assert count("password_reset_requests") == 0
    assert count("email_outbox", "family = 'password_reset'") == 1


def test_after_a_reset_the_sign_in_page_starts_with_the_address_once(
    client, ask_reset, reset_links, set_password, make_user
):
    """Issue 47, item 7: the person who has just chosen a password types only that."""
    email = make_user("employee")
    ask_reset(email)
    (link,) = reset_links(email)
    done = set_password(link, NEW_PASSWORD)
    assert done.status_code == 302 and done.location.endswith("/login")
    page = client.get("/login").get_data(as_text=True)
    assert re.search(rf'<input[^>]*id="email"[^>]*value="{re.escape(email)}"', page)
    assert 'id="password"' in page and 'type="password"' in page  # the password step, at once
    assert email not in done.location  # in the session, never in a URL (or the access log)
    assert email not in client.get("/login").get_data(as_text=True)  # once: the next visit starts empty
