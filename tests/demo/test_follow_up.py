"""Sales follows up demo requests: a status (new, contacted, done) and a note, set by an admin."""

import re

import pytest


@pytest.fixture
def admin(auth, make_user):
    email = make_user("admin")
    auth.login(email)
    return email


def token_of(client, path):
    return re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', client.get(path).get_data(as_text=True)).group(
        1
    )


def test_an_admin_marks_a_request_contacted_with_a_note(client, admin, ask, table_rows, user_id):
    request = ask()
    path = f"/admin/demo-requests/{request.submission_id}"
    page = client.get(path).get_data(as_text=True)
    assert "Demo request from Sofia Reyes" in page and 'selected value="new"' in page

    response = client.post(
        path,
        data={"status": "contacted", "note": "Called Sofia; demo on Tuesday.", "csrf_token": token_of(client, path)},
    )
    assert response.status_code == 302
    (row,) = table_rows("demo_submissions")
    assert (row["status"], row["note"]) == ("contacted", "Called Sofia; demo on Tuesday.")
    assert row["status_changed_by"] == user_id(admin) and row["status_changed_at"]
    shown = client.get(path).get_data(as_text=True)
    assert "Saved: the request from Sofia Reyes is contacted." in shown and 'selected value="contacted"' in shown

    listed = client.get("/admin/demo-requests").get_data(as_text=True)
    assert "Contacted" in listed and "Called Sofia; demo on Tuesday." in listed
    assert "Sofia Reyes" in client.get("/admin/demo-requests?status=contacted").get_data(as_text=True)
    assert "Sofia Reyes" not in client.get("/admin/demo-requests?status=new").get_data(as_text=True)


@pytest.mark.parametrize(
    "fields, error",
    [
        ({"note": "x"}, "Choose new, contacted or done."),  # no status at all
        ({"status": "", "note": "x"}, "Choose new, contacted or done."),
        ({"status": "won", "note": "x"}, "Choose new, contacted or done."),
        ({"status": "done", "note": "x" * 2001}, "Keep the note under 2,000 characters."),
        ({"status": "done", "note": "bell \x07"}, "control character"),
    ],
)
def test_a_missing_or_unknown_status_is_a_field_error_not_a_500(client, admin, ask, table_rows, fields, error):
    request = ask()
    path = f"/admin/demo-requests/{request.submission_id}"
    response = client.post(path, data={**fields, "csrf_token": token_of(client, path)})

    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert 'class="error-summary"' in page and error in page
    (row,) = table_rows("demo_submissions")
    assert (row["status"], row["note"]) == ("new", ""), "nothing was saved"


def test_only_admins_follow_up_and_unknown_requests_are_404(client, auth, make_user, ask):
    request = ask()
    path = f"/admin/demo-requests/{request.submission_id}"
    assert client.get(path).status_code == 302  # signed out: to sign-in
    auth.login(make_user("manager"))
    assert client.get(path).status_code == 403
    auth.logout()
    auth.login(make_user("admin"))
    assert client.get("/admin/demo-requests/999").status_code == 404
    assert client.get("/admin/demo-requests?status=nonsense").status_code == 200, "an unknown filter shows all"


def test_the_companies_list_searches_and_says_when_each_joined(client, admin, make_user, db):
    make_user("manager", company="Acme Ltd")
    make_user("manager", company="Fjord Analytics AS")
    with db.write() as conn:
        conn.exec_driver_sql("UPDATE companies SET created_at = '2026-03-07T10:00:00.000Z' WHERE name = 'Acme Ltd'")
    page = client.get("/admin/").get_data(as_text=True)
    assert "2 companies." in page
    acme_row = re.search(r"<tr><td><a [^>]*>Acme Ltd</a></td><td[^>]*>([^<]+)</td>", page)
    assert acme_row and acme_row.group(1) == "7 Mar 2026"

    found = client.get("/admin/?q=FJORD").get_data(as_text=True)
    assert "Fjord Analytics AS" in found and "Acme Ltd" not in found and "1 company matches" in found
    none = client.get("/admin/?q=100%25").get_data(as_text=True)
    assert "No company name contains" in none and "Acme Ltd" not in none
