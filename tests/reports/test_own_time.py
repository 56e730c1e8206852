"""Issue 50, item 4: company time and own time. The platforms may say a session was in the volunteer's
own time; those hours count in the employer's report only for volunteers who chose so on My hours
(not until they do), and every report says which hours it counts. A filed report does not change when
a choice does.

Expected figures are computed here from the rows the test inserted, never from the portal's code.
"""

from __future__ import annotations

import io
import re
from html import unescape

import sqlalchemy as sa
from pypdf import PdfReader

from tests.pages import csrf_from

from .conftest import Row, oslo, shown_hours

MARCH = "from=2025-03-01&to=2025-03-31&programme=all"


def pdf_text(response) -> str:
    assert response.status_code == 200 and response.mimetype == "application/pdf", response.status_code
    return " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(response.get_data())).pages).split())


def page_hours(client, query=MARCH) -> tuple[str, str]:
    page = client.get(f"/reports?{query}").get_data(as_text=True)
    hours = re.search(r'id="figure-hours">([^<]*)<', page).group(1)
    counted = re.search(r'id="counted-time">([^<]*)<', page).group(1)
    return hours, unescape(counted)


def choose(client, counted: bool) -> None:
    token = csrf_from(client.get("/me/hours").get_data(as_text=True))
    response = client.post(
        "/me/hours/own-time", data={"csrf_token": token, "count_own_time": "yes" if counted else "no"}
    )
    assert response.status_code == 302


def choices(db, user_id):
    with db.read() as conn:
        return conn.execute(
            sa.text("SELECT counted, chosen_at FROM own_time_choices WHERE user_id = :u ORDER BY id"), {"u": user_id}
        ).all()


def emails_of(db, ids):
    with db.read() as conn:
        return [conn.execute(sa.text("SELECT email FROM users WHERE id = :u"), {"u": u}).scalar_one() for u in ids]


def test_own_time_counts_only_for_volunteers_who_chose_so_and_the_report_says_which_it_counts(
    db, company, insert_sessions, manager_client, client, auth
):
    company_id, manager, people = company("Acme Ltd", employees=12)
    working = insert_sessions([Row("language", uid, company_id, oslo("2025-03-04T18:00"), 60) for uid in people[:6]])
    own = insert_sessions(
        [Row("language", uid, company_id, oslo("2025-03-08T11:00"), 45, own_time=True) for uid in people[:6]]
    )
    manager_page = manager_client(manager)
    hours, counted = page_hours(manager_page)
    assert hours == shown_hours(sum(r.minutes for r in working)), "nobody chose: own time is not counted"
    assert counted.startswith("Counts hours in working time. No own-time hours are included")

    # Two volunteers choose to include their own time; one of them changes their mind later.
    emails = emails_of(db, people[:2])
    for email in emails:
        auth.logout()
        auth.login(email)
        choose(client, True)
    auth.logout()
    auth.login(emails[1])
    choose(client, False)
    first, second = choices(db, people[0]), choices(db, people[1])
    assert [c for c, _ in first] == [1] and [c for c, _ in second] == [1, 0], "every choice kept, with its moment"
    assert all(at for _, at in first + second)
    my_hours = unescape(client.get("/me/hours").get_data(as_text=True))
    assert "Not counted in your employer's report" in my_hours and "Own time" in my_hours
    assert "Working time" in my_hours

    auth.logout()
    manager_page = manager_client(manager)
    hours, counted = page_hours(manager_page)
    included = [r for r in own if r.user_id == people[0]]
    assert hours == shown_hours(sum(r.minutes for r in working + included))
    assert counted == "Counts hours in working time, and own-time hours of the 1 volunteer who chose to include them."
    # The filing PDF states it too, but a group of 1 is not numbered there.
    text = pdf_text(manager_page.get(f"/reports/export.pdf?{MARCH}"))
    assert "own-time hours of the volunteers who chose to include them (their number is not shown" in text
    assert "of the 1 volunteer" not in text


def test_a_filed_period_does_not_change_when_a_volunteer_changes_their_choice(
    db, company, insert_sessions, manager_client, client, auth
):
    company_id, manager, people = company("Acme Ltd", employees=12)
    working = insert_sessions([Row("language", uid, company_id, oslo("2025-03-04T18:00"), 60) for uid in people[:6]])
    insert_sessions(
        [Row("language", uid, company_id, oslo("2025-03-08T11:00"), 45, own_time=True) for uid in people[:6]]
    )
    manager_page = manager_client(manager)
    filed = pdf_text(manager_page.get(f"/reports/export.pdf?{MARCH}"))
    working_hours = shown_hours(sum(r.minutes for r in working))
    assert f"{working_hours} Verified hours" in filed or working_hours in filed
    for email in emails_of(db, people[:6]):
        auth.logout()
        auth.login(email)
        choose(client, True)
    auth.logout()
    manager_page = manager_client(manager)
    hours, counted = page_hours(manager_page)
    assert hours == shown_hours(sum(r.minutes for r in working) + 6 * 45), "the live report follows the choice"
    assert counted == "Counts hours in working time, and own-time hours of the 6 volunteers who chose to include them."
    assert pdf_text(manager_page.get(f"/reports/export.pdf?{MARCH}")) == filed, "the filed report does not change"


def test_a_filing_numbers_the_own_time_volunteers_only_when_neither_side_is_a_small_group(
    db, company, insert_sessions, manager_client
):
    company_id, manager, people = company("Acme Ltd", employees=14)

    def month(first: str, everyone: list[int], opted: list[int]) -> None:
        insert_sessions([Row("language", uid, company_id, oslo(f"{first}-04T18:00"), 60) for uid in everyone])
        insert_sessions(
            [Row("language", uid, company_id, oslo(f"{first}-09T11:00"), 30, own_time=True) for uid in opted]
        )

    # April: 7 volunteers, 5 of them with own time counted: the other 2 would be a group of 2.
    month("2025-04", people[:7], people[:5])
    # May: 10 volunteers, 5 with own time counted and 5 without: both groups of 5.
    month("2025-05", people[:10], people[:5])
    with db.write() as conn:
        for uid in people[:5]:
            conn.execute(
                sa.text("INSERT INTO own_time_choices (user_id, counted, chosen_at) VALUES (:u, 1, :t)"),
                {"u": uid, "t": "2025-01-01T00:00:00.000000Z"},
            )
    client = manager_client(manager)
    april = "from=2025-04-01&to=2025-04-30&programme=all"
    may = "from=2025-05-01&to=2025-05-31&programme=all"
    numbered = "Counts hours in working time, and own-time hours of the 5 volunteers who chose to include them."
    assert page_hours(client, april)[1] == numbered  # the working copy numbers them
    april_text = pdf_text(client.get(f"/reports/export.pdf?{april}"))
    assert "of the 5 volunteers" not in april_text and "(their number is not shown" in april_text
    may_text = pdf_text(client.get(f"/reports/export.pdf?{may}"))
    assert numbered in may_text


def test_a_managers_page_of_a_volunteer_shows_own_time_only_when_they_chose_to_count_it(
    db, company, insert_sessions, manager_client, client, auth
):
    company_id, manager, people = company("Acme Ltd", employees=1)
    working = Row("language", people[0], company_id, oslo("2025-03-04T18:00"), 60)
    own = Row("language", people[0], company_id, oslo("2025-03-09T11:00"), 45, own_time=True)
    insert_sessions([working, own])
    page = manager_client(manager).get(f"/reports/volunteers/{people[0]}?{MARCH}").get_data(as_text=True)
    assert "Own time" not in page and shown_hours(60) in page, "not chosen: the manager sees what the report counts"
    auth.logout()
    auth.login(emails_of(db, people[:1])[0])
    choose(client, True)
    auth.logout()
    page = manager_client(manager).get(f"/reports/volunteers/{people[0]}?{MARCH}").get_data(as_text=True)
    assert "Own time" in page and shown_hours(60 + 45) in page
