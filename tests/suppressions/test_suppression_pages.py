"""The admin's suppression list: search, add and remove with a reason, every change audited."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

PAGE = "/admin/suppressions/"


def suppressed(db):
    with db.read() as conn:
        return {row.email: row for row in conn.execute(sa.text("SELECT * FROM email_suppressions"))}


def audit(db):
    with db.read() as conn:
        return [
            dict(r)
            for r in conn.execute(
                sa.text(
                    "SELECT e.email, e.action, e.reason, e.source, u.email AS actor FROM email_suppression_events e "
                    "LEFT JOIN users u ON u.id = e.actor_user_id ORDER BY e.id"
                )
            ).mappings()
        ]


def seed(db, *emails, source="webhook"):
    with db.write() as conn:
        for i, email in enumerate(emails):
            conn.execute(
                sa.text(
                    "INSERT INTO email_suppressions (email, reason, source, created_at) VALUES (:e, 'bounced (permanent)', :s, :t)"
                ),
                {"e": email, "s": source, "t": f"2026-10-15T09:30:0{i}.000000Z"},
            )


def add(client, auth, **form):
    return client.post(PAGE, data={"csrf_token": auth.csrf_token(PAGE), **form})


def confirm(client, auth, email):
    """The list's Remove button: the confirmation page for that address."""
    return client.post(f"{PAGE}remove/confirm", data={"csrf_token": auth.csrf_token(PAGE), "email": email})


def remove(client, auth, email, **form):
    return client.post(f"{PAGE}remove", data={"csrf_token": auth.csrf_token(PAGE), "email": email, **form})


def test_admin_sees_the_list_in_the_menu(client, admin, db):
    seed(db, "ada@example.com")
    page = client.get(PAGE).get_data(as_text=True)
    assert 'href="/admin/suppressions/">Suppressions</a>' in page
    assert "ada@example.com" in page and "Email provider" in page


def test_admin_adds_an_address_with_a_reason(client, auth, admin, db):
    response = add(client, auth, email="  Grace@Example.com ", reason="Asked by phone not to be emailed")
    assert response.status_code == 302 and response.headers["Location"].endswith(PAGE)

    entry = suppressed(db)["grace@example.com"]
    assert (entry.reason, entry.source) == ("Asked by phone not to be emailed", "admin")
    assert audit(db) == [
        {
            "email": "grace@example.com",
            "action": "add",
            "reason": "Asked by phone not to be emailed",
            "source": "admin",
            "actor": admin,
        }
    ]
    page = client.get(PAGE).get_data(as_text=True)
    assert "grace@example.com will not be emailed." in page
    assert "Recent changes" in page and admin in page


@pytest.mark.parametrize(
    "form, message",
    [
        ({"email": "not-an-address", "reason": "because"}, "Invalid email address"),
        ({"email": "", "reason": "because"}, "This field is required"),
        ({"email": "grace@example.com", "reason": "   "}, "This field is required"),
        ({"email": "grace@example.com", "reason": "x" * 201}, "Field cannot be longer than 200 characters"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error_and_nothing_written(client, auth, admin, db, form, message):
    response = add(client, auth, **form)
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "There is a problem" in page and message in page
    assert suppressed(db) == {} and audit(db) == []


def test_adding_an_address_already_listed_is_refused(client, auth, admin, db):
    seed(db, "ada@example.com")
    response = add(client, auth, email="ADA@example.com", reason="again")
    assert response.status_code == 400
    assert "already on the suppression list" in response.get_data(as_text=True)
    assert audit(db) == []


def test_form_without_its_csrf_token_is_refused(client, admin, db):
    response = client.post(PAGE, data={"email": "grace@example.com", "reason": "x"})
    assert response.status_code == 400
    assert suppressed(db) == {}


def test_admin_removes_an_address_with_a_reason(client, auth, admin, db):
    seed(db, "ada@example.com")
    page = client.get(PAGE).get_data(as_text=True)
    # The address travels in a POST body, never in a URL an access log or a Referer would keep.
    assert 'action="/admin/suppressions/remove/confirm"' in page and "remove?email" not in page
    assert 'name="email" value="ada@example.com"' in page
    confirmation = confirm(client, auth, "ada@example.com")
    assert confirmation.status_code == 200
    assert "Remove ada@example.com from the suppression list?" in confirmation.get_data(as_text=True)
    assert client.get(f"{PAGE}remove?email=ada%40example.com").status_code == 405

    response = remove(client, auth, "ada@example.com", reason="Mailbox fixed, confirmed by phone")
    assert response.status_code == 302
    assert suppressed(db) == {}
    assert audit(db) == [
        {
            "email": "ada@example.com",
            "action": "remove",
            "reason": "Mailbox fixed, confirmed by phone",
            "source": "admin",
            "actor": admin,
        }
    ]
    assert "ada@example.com may be emailed again." in client.get(PAGE).get_data(as_text=True)


def test_removing_needs_a_reason(client, auth, admin, db):
    seed(db, "ada@example.com")
    response = remove(client, auth, "ada@example.com", reason="")
    assert response.status_code == 400
    assert "This field is required" in response.get_data(as_text=True)
    assert "ada@example.com" in suppressed(db) and audit(db) == []


def test_removing_an_address_not_listed_is_refused(client, auth, admin, db):
    seed(db, "ada@example.com")
    response = remove(client, auth, "nobody@example.com", reason="tidy up")
    assert response.status_code == 400
    assert "not on the suppression list" in response.get_data(as_text=True)
    assert audit(db) == []
    follow = client.get(confirm(client, auth, "nobody@example.com").headers["Location"])
    assert "not on the suppression list" in follow.get_data(as_text=True)


def test_remove_page_shows_the_address_history(client, auth, admin, db):
    add(client, auth, email="grace@example.com", reason="first reason")
    remove(client, auth, "grace@example.com", reason="second reason")
    add(client, auth, email="grace@example.com", reason="third reason")
    page = confirm(client, auth, "grace@example.com").get_data(as_text=True)
    assert page.index("third reason") < page.index("second reason") < page.index("first reason")


def test_search_is_a_substring_match_on_the_address(client, admin, db):
    seed(db, "ada@example.com", "grace@navy.example", "a_b@example.com", "abb@example.com")
    page = client.get(PAGE, query_string={"q": "NAVY"}).get_data(as_text=True)
    assert "grace@navy.example" in page and "ada@example.com" not in page
    assert "Showing all 1" in page

    literal = client.get(PAGE, query_string={"q": "a_b"}).get_data(as_text=True)
    assert "a_b@example.com" in literal and "abb@example.com" not in literal, "_ is not a wildcard"

    none = client.get(PAGE, query_string={"q": "zzz"}).get_data(as_text=True)
    assert "No suppressed address contains" in none


def test_search_text_is_escaped(client, admin):
    page = client.get(PAGE, query_string={"q": "<script>x</script>"}).get_data(as_text=True)
    assert "<script>x</script>" not in page


def test_long_lists_are_paged_and_say_how_much_they_show(client, admin, db):
    with db.write() as conn:
        conn.execute(
            sa.text("INSERT INTO email_suppressions (email, reason, source, created_at) VALUES (:e, 'r', 'admin', :t)"),
            [{"e": f"p{i}@example.com", "t": f"2026-10-15T09:{i // 60:02d}:{i % 60:02d}.000000Z"} for i in range(205)],
        )
    page = client.get(PAGE).get_data(as_text=True)
    assert "Showing 1–50 of 205" in page and "Page 1 of 5" in page
    assert len(re.findall(r"<td>p\d+@example.com</td>", page)) == 50
    last = client.get(PAGE, query_string={"page": 5}).get_data(as_text=True)
    assert "Showing 201–205 of 205" in last and "<td>p0@example.com</td>" in last  # the oldest, at last
    searched = client.get(PAGE, query_string={"q": "p1"}).get_data(as_text=True)
    assert "Showing 1–50 of 111" in searched and "q=p1&amp;page=2" in searched.replace(
        "page=2&amp;q=p1", "q=p1&amp;page=2"
    )


@pytest.mark.parametrize("role", ["manager", "employee"])
def test_other_roles_get_403(client, auth, make_user, db, role):
    auth.login(make_user(role))
    assert client.get(PAGE).status_code == 403
    token = auth.csrf_token("/")
    assert client.post(f"{PAGE}remove/confirm", data={"csrf_token": token, "email": "a@b.example"}).status_code == 403
    assert client.post(PAGE, data={"csrf_token": token, "email": "x@example.com", "reason": "r"}).status_code == 403
    assert (
        client.post(f"{PAGE}remove", data={"csrf_token": token, "email": "x@example.com", "reason": "r"}).status_code
        == 403
    )
    assert suppressed(db) == {}


def test_signed_out_visitors_are_sent_to_sign_in(client):
    response = client.get(PAGE)
    assert response.status_code == 302 and "/login" in response.headers["Location"]
