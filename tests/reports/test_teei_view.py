"""Issue 47, item 4: TEEI's partners overview, and its read-only view of a company's report.

The overview's figures are checked against a computation over the inserted attendance rows, at the
precision the page shows; the read-only report hides what the company's filing hides, and writes nothing.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import sqlalchemy as sa

from portal.core import clock

from .conftest import OSLO, Row, oslo, shown_hours


def _row_of(page: str, company_id: int) -> str:
    return page.split(f'data-company="{company_id}"')[1].split("</tr>")[0]


def _cell(row: str, name: str) -> str:
    return re.search(rf'class="[^"]*{name}[^"]*"[^>]*>([^<]*)<', row).group(1).strip()


def programme_cells(html: str, table: str) -> list[list[str]]:
    """Each programme row's hours, sessions and volunteers, as the page prints them."""
    found = re.search(rf'<table id="{table}">.*?</table>', html, re.S).group(0)
    return [
        [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r)[:3]]
        for r in re.findall(r'<tr><th scope="row">.*?</tr>', found, re.S)
    ]


def _same_day_last_year(day: date) -> date:
    return (
        date(day.year - 1, day.month, 28) if (day.month, day.day) == (2, 29) else date(day.year - 1, day.month, day.day)
    )


def test_the_overview_states_each_companys_hours_active_volunteers_and_last_session(
    db, company, insert_sessions, client, auth, make_user
):
    acme, _, staff = company("Acme Ltd", employees=4)
    fjord, _, others = company("Fjord AS", employees=1)
    now = clock.utcnow()
    moments = [now - timedelta(days=d, hours=h) for d, h in ((1, 0), (20, 3), (80, 1), (100, 0), (200, 5), (370, 2))]
    moments += [now - timedelta(days=365 + 30), now - timedelta(days=365 - 20), now - timedelta(days=500)]
    rows = [Row("language", staff[i % 4], acme, m, 35 + 7 * i) for i, m in enumerate(moments)]
    rows.append(Row("mentorship", staff[3], acme, now - timedelta(days=2), 50, status="cancelled"))
    rows.append(Row("language", staff[3], acme, now + timedelta(days=3), 45))  # reported ahead: not yet held
    rows.append(Row("mentorship", others[0], fjord, now - timedelta(days=5), 61))
    insert_sessions(rows)

    auth.login(make_user("admin"))
    page = client.get("/admin/partners").get_data(as_text=True)

    # The same figures, computed here from the rows, in local (Oslo) days.
    today = now.astimezone(OSLO).date()
    last_end = _same_day_last_year(today)
    attended = [r for r in rows if r.company_id == acme and r.status == "attended"]
    local = [(r, r.held_at.astimezone(OSLO).date()) for r in attended]
    this_year = sum(r.minutes for r, d in local if date(today.year, 1, 1) <= d <= today)
    last_year = sum(r.minutes for r, d in local if date(today.year - 1, 1, 1) <= d <= last_end)
    active = {r.user_id for r in attended if now - timedelta(days=90) <= r.held_at <= now}
    last = max(r.held_at for r in attended if r.held_at <= now).astimezone(OSLO).date()

    row = _row_of(page, acme)
    assert _cell(row, "hours-this-year") == shown_hours(this_year)
    assert _cell(row, "hours-last-year") == shown_hours(last_year)
    assert _cell(row, "active-volunteers") == str(len(active))
    assert _cell(row, "last-session") == f"{last.day} {last:%b %Y}"
    if last_year and abs(this_year - last_year) * 100 >= 5 * last_year:
        word = "Up" if this_year > last_year else "Down"
    else:
        word = "Up" if this_year and not last_year else "Flat"
    trend = re.sub(r"<[^>]+>", "", row.split('data-label="Trend">')[1].split("</td>")[0])
    assert word in trend and ("▲" if word == "Up" else "▼" if word == "Down" else "▬") in trend
    assert _cell(_row_of(page, fjord), "active-volunteers") == "1"
    assert "in the last 90 days" in page  # the definition is on the page
    # Ordered by this year's hours, most first; by name on request.
    assert page.index(f'data-company="{acme}"') < page.index(f'data-company="{fjord}"') or this_year < 61
    by_name = client.get("/admin/partners?sort=name").get_data(as_text=True)
    assert by_name.index(f'data-company="{acme}"') < by_name.index(f'data-company="{fjord}"')
    assert f"/admin/companies/{acme}/report" in page


def test_the_overview_compares_with_last_year_to_the_same_date(db, company, insert_sessions):
    from portal.admin.queries import partner_overview

    acme, _, staff = company("Acme Ltd", employees=2)
    now = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)
    insert_sessions(
        [
            Row("language", staff[0], acme, oslo("2026-01-01T00:30"), 60),  # 31 Dec 23:30 UTC: this year in Oslo
            Row("language", staff[0], acme, oslo("2026-03-15T09:00"), 60),
            Row("language", staff[1], acme, oslo("2025-03-15T20:00"), 90),  # last year, the same date: counted
            Row("language", staff[1], acme, oslo("2025-03-16T08:00"), 600),  # after the same date: not
            Row("language", staff[1], acme, oslo("2025-12-01T08:00"), 30),  # more than 90 days ago: not active
        ]
    )
    (row,) = partner_overview(db, now=now, tz=OSLO).rows
    assert (row.minutes_this_year, row.minutes_last_year) == (120, 90)
    assert row.active_volunteers == 1 and row.trend == "up"
    assert row.last_session_at == clock.iso(oslo("2026-03-15T09:00"))


def test_the_overview_and_a_companys_report_are_for_teeis_admins_only(client, auth, company, make_user):
    acme, _, _ = company("Acme Ltd", employees=1)
    _, fjord_manager, _ = company("Fjord AS", employees=1)
    auth.login(fjord_manager)
    assert client.get(f"/admin/companies/{acme}/report").status_code == 403
    assert client.get("/admin/partners").status_code == 403
    auth.logout()
    auth.login(make_user("admin"))
    assert client.get("/admin/companies/999999/report").status_code == 404
    empty = client.get(f"/admin/companies/{acme}/report")  # no sessions yet: the page says so, read-only
    assert empty.status_code == 200 and "No hours yet" in empty.get_data(as_text=True)
    assert "/invitations/new" not in empty.get_data(as_text=True)
    bad = client.get(f"/admin/companies/{acme}/report?from=2026-13-01&to=2026-01-01")
    assert bad.status_code == 400 and "read-only" in bad.get_data(as_text=True)


def test_teeis_view_of_a_report_is_the_managers_page_read_only_and_hidden_as_its_filing(
    db, company, insert_sessions, manager_client, make_user, auth, client
):
    acme, manager, staff = company("Acme Ltd", employees=11)
    # June 2025: six colleagues in Language, five others in Mentorship: groups the filing states.
    rows = [Row("language", staff[i], acme, oslo(f"2025-06-0{i + 1}T18:00"), 60) for i in range(6)]
    rows += [Row("mentorship", staff[i], acme, oslo(f"2025-06-{i + 10}T18:00"), 45) for i in range(6, 11)]
    # July 2025: the same six in Language, two in Mentorship (a group the filing cannot state).
    rows += [Row("language", staff[i], acme, oslo(f"2025-07-0{i + 1}T18:00"), 60) for i in range(6)]
    rows += [Row("mentorship", staff[i], acme, oslo(f"2025-07-{i + 10}T18:00"), 45) for i in (6, 7)]
    insert_sessions(rows)
    june, july = "from=2025-06-01&to=2025-06-30", "from=2025-07-01&to=2025-07-31"

    def filings():
        with db.read() as conn:
            return conn.execute(sa.text("SELECT COUNT(*) FROM filing_releases")).scalar_one()

    auth.login(make_user("admin"))
    page = client.get(f"/admin/companies/{acme}/report?{june}&programme=language").get_data(as_text=True)
    assert "Viewing Acme Ltd's report as TEEI (read-only)" in page
    assert filings() == 0  # reading the view files nothing
    # No write actions and no working copies: no settings, no year close, no downloads, no names.
    for absent in ("/reports/settings", "/reports/close", "/reports/export", "Acme Volunteer", "/reports/volunteers/"):
        assert absent not in page, absent
    assert programme_cells(page, "by-programme") == [
        [shown_hours(6 * 60), "6", "6"],
        [shown_hours(5 * 45), "5", "5"],
    ]  # the programme filter is ignored: a filing is of all programmes
    july_page = client.get(f"/admin/companies/{acme}/report?{july}").get_data(as_text=True)
    assert programme_cells(july_page, "by-programme")[1] == ["hidden", "hidden", "hidden"]  # two colleagues
    assert "Acme Volunteer" not in july_page and filings() == 0
    auth.logout()

    # The manager files June (its PDF); the public verify page states the filing, hidden as filed.
    client = manager_client(manager)
    for month in (june, july):
        assert client.get(f"/reports/export.pdf?{month}&programme=all").status_code == 200
    report_id = re.search(r"<code>(TEEI-[^<]+)</code>", client.get(f"/reports?{july}").get_data(as_text=True))
    verify = client.get(f"/verify/{report_id.group(1)}").get_data(as_text=True)
    auth.logout()
    auth.login(make_user("admin"))
    again = client.get(f"/admin/companies/{acme}/report?{july}").get_data(as_text=True)

    # Hours, sessions and volunteers per programme: TEEI's view states exactly what the filing states.
    assert programme_cells(again, "by-programme") == programme_cells(verify, "verify-programmes")
    assert report_id.group(1) in again


def test_a_small_companys_totals_stay_hidden_in_every_part_of_teeis_view(
    company, insert_sessions, make_user, auth, client
):
    acme, _, staff = company("Acme Ltd", employees=2)
    insert_sessions([Row("language", staff[i], acme, oslo(f"2025-06-0{i + 1}T18:00"), 97) for i in range(2)])
    auth.login(make_user("admin"))
    page = client.get(f"/admin/companies/{acme}/report?from=2025-06-01&to=2025-06-30").get_data(as_text=True)
    assert re.search(r'id="figure-hours"><span class="hidden-figure">hidden<', page)
    # Two colleagues' hours appear nowhere: not in a table, a chart, the crosswalk or a rounding note.
    for told in (shown_hours(2 * 97), shown_hours(97)):
        assert told not in page, told
    assert "<svg" not in page


def test_teeis_view_shows_only_filing_periods_and_words_own_time_as_the_filing_does(
    db, company, insert_sessions, make_user, auth, client
):
    acme, _, staff = company("Acme Ltd", employees=8)
    # April 2025: 7 volunteers, 5 of them counting their own time: the other 2 would be a group of 2.
    rows = [Row("language", uid, acme, oslo("2025-04-04T18:00"), 60) for uid in staff[:7]]
    rows += [Row("language", uid, acme, oslo("2025-04-09T11:00"), 30, own_time=True) for uid in staff[:5]]
    insert_sessions(rows)
    with db.write() as conn:
        for uid in staff[:5]:
            conn.execute(
                sa.text("INSERT INTO own_time_choices (user_id, counted, chosen_at) VALUES (:u, 1, :t)"),
                {"u": uid, "t": "2025-01-01T00:00:00.000000Z"},
            )
    auth.login(make_user("admin"))
    april = client.get(f"/admin/companies/{acme}/report?from=2025-04-01&to=2025-04-30").get_data(as_text=True)
    counted = re.search(r'id="counted-time">([^<]*)<', april).group(1)
    assert "the 5 volunteers" not in april and "their number is not shown" in counted

    # Two views of periods no filing covers would differ by one colleague's day: TEEI gets neither.
    part = client.get(f"/admin/companies/{acme}/report?from=2025-04-01&to=2025-04-08")
    assert part.status_code == 400
    assert "choose a whole month, quarter or year that has ended" in part.get_data(as_text=True)
    assert shown_hours(7 * 60) not in part.get_data(as_text=True)
    # With no period chosen, the view opens the latest one a filing covers (last month), not this year to date.
    today = clock.utcnow().astimezone(OSLO).date()
    last_month_end = today.replace(day=1) - timedelta(days=1)
    opened = client.get(f"/admin/companies/{acme}/report")
    assert opened.status_code == 200
    assert f'value="{last_month_end.replace(day=1).isoformat()}"' in opened.get_data(as_text=True)
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM filing_releases")).scalar_one() == 0


def test_the_overview_counts_own_time_only_where_the_volunteer_chose_so(db, company, insert_sessions):
    from portal.admin.queries import partner_overview

    acme, _, staff = company("Acme Ltd", employees=2)
    now = oslo("2026-03-20T12:00")
    insert_sessions(
        [
            Row("language", staff[0], acme, oslo("2026-03-02T09:00"), 60),
            Row("language", staff[0], acme, oslo("2026-03-03T09:00"), 40, own_time=True),  # chose: counts
            Row("language", staff[1], acme, oslo("2026-03-04T09:00"), 25, own_time=True),  # did not choose
        ]
    )
    with db.write() as conn:
        conn.execute(
            sa.text("INSERT INTO own_time_choices (user_id, counted, chosen_at) VALUES (:u, 1, :t)"),
            {"u": staff[0], "t": "2026-01-01T00:00:00.000000Z"},
        )
    (row,) = partner_overview(db, now=now, tz=OSLO).rows
    assert row.minutes_this_year == 100 and row.active_volunteers == 1
