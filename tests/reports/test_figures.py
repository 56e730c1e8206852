"""Every figure against a computation written here, in Python, over the rows the test inserted."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from datetime import date, timedelta

import pytest

from portal.core.periods import Period
from portal.reports.figures import read_figures
from portal.reports.selection import ReportQuery

from .conftest import OSLO, Row, oslo, shown_hours, utc


def figures_of(db, **query):
    """The figures, read in a transaction of their own (the report page reads them in its own)."""
    with db.read() as conn:
        return read_figures(conn, **query)


def expected(rows, company_id, start: date, end: date, programmes=("language", "mentorship")):
    """Figures the slow, obvious way: local dates in Oslo, attended only, this company only."""
    kept = [
        r
        for r in rows
        if r.company_id == company_id
        and r.status == "attended"
        and r.platform in programmes
        and start <= r.held_at.astimezone(OSLO).date() <= end
    ]
    months = defaultdict(list)
    for r in kept:
        local = r.held_at.astimezone(OSLO).date()
        months[(local.year, local.month)].append(r)
    return {
        "minutes": sum(r.minutes for r in kept),
        "sessions": len(kept),
        "volunteers": len({r.user_id for r in kept}),
        "by_programme": {
            p: (
                sum(r.minutes for r in kept if r.platform == p),
                len([r for r in kept if r.platform == p]),
                len({r.user_id for r in kept if r.platform == p}),
            )
            for p in programmes
        },
        "by_month": {k: (sum(r.minutes for r in v), len(v), len({r.user_id for r in v})) for k, v in months.items()},
        "by_volunteer": {u: sum(r.minutes for r in kept if r.user_id == u) for u in {r.user_id for r in kept}},
        "by_month_programme": {
            (k, p): (
                sum(r.minutes for r in v if r.platform == p),
                sum(r.platform == p for r in v),
                len({r.user_id for r in v if r.platform == p}),
            )
            for k, v in months.items()
            for p in programmes
        },
    }


@pytest.fixture
def two_companies(company, insert_sessions):
    acme, manager, staff = company("Acme Ltd", employees=8)
    other, _, other_staff = company("Other Co", employees=3)
    rng = random.Random(7)
    rows = []
    start = utc("2024-12-25T00:00:00")
    for _ in range(600):
        person = rng.choice(staff + other_staff)
        rows.append(
            Row(
                rng.choice(["language", "mentorship"]),
                person,
                acme if person in staff else other,
                start + timedelta(minutes=rng.randrange(0, 60 * 24 * 400)),
                rng.choice([30, 45, 60, 90]),
                rng.choice(["attended"] * 8 + ["cancelled", "no_show"]),
            )
        )
    insert_sessions(rows)
    return acme, manager, staff, rows


@pytest.mark.parametrize("programme", ["all", "language", "mentorship"])
def test_figures_match_an_independent_computation(db, two_companies, programme):
    acme, _, staff, rows = two_companies
    period = Period(date(2025, 1, 1), date(2025, 12, 31), "2025")
    query = ReportQuery(period, programme)
    figures = figures_of(db, company_id=acme, query=query, tz=OSLO)
    want = expected(rows, acme, period.start, period.end, query.programmes)

    assert (figures.total.minutes, figures.total.sessions, figures.total.volunteers) == (
        want["minutes"],
        want["sessions"],
        want["volunteers"],
    )
    assert {p: (c.minutes, c.sessions, c.volunteers) for p, c in figures.programmes.items()} == want["by_programme"]
    got_months = {
        (int(m.start[:4]), int(m.start[5:7])): (m.total.minutes, m.total.sessions, m.total.volunteers)
        for m in figures.months
        if m.total.sessions
    }
    assert got_months == want["by_month"]
    got_cells = {
        ((int(m.start[:4]), int(m.start[5:7])), p): (c.minutes, c.sessions, c.volunteers)
        for m in figures.months
        if m.total.sessions
        for p, c in m.programmes.items()
    }
    assert got_cells == want["by_month_programme"]
    assert len(figures.months) == 12
    assert {v.user_id: v.minutes for v in figures.volunteers} == want["by_volunteer"]
    assert figures.employees == 8  # every Acme colleague had an account all year; Other Co's are not counted
    assert figures.participation == round(100 * want["volunteers"] / 8, 1)


def test_the_page_shows_the_same_figures(two_companies, manager_client):
    acme, manager, _, rows = two_companies
    page = manager_client(manager).get("/reports?from=2025-03-01&to=2025-05-31&programme=all").get_data(as_text=True)
    want = expected(rows, acme, date(2025, 3, 1), date(2025, 5, 31))
    assert re.search(r'id="figure-hours">([\d,.]+)<', page).group(1) == shown_hours(want["minutes"])
    assert re.search(r'id="figure-sessions">([\d,]+)<', page).group(1) == f"{want['sessions']:,}"
    assert re.search(r'id="figure-volunteers">([\d,]+)<', page).group(1) == str(want["volunteers"])
    assert "Acme Volunteer" in page and "Other Volunteer" not in page
    assert '<title id="chart-months-title">Verified hours by month</title>' in page


def test_a_late_evening_session_belongs_to_its_local_month(db, company, insert_sessions):
    acme, _, (volunteer, *_) = company("Acme Ltd", employees=1)
    # 23:30 in Oslo on 31 January is 22:30 UTC; 23:30 on 31 July (summer time) is 21:30 UTC.
    # 00:30 in Oslo on 1 March is still 28 February in UTC.
    insert_sessions(
        [
            Row("language", volunteer, acme, oslo("2025-01-31T23:30"), 60),
            Row("language", volunteer, acme, oslo("2025-07-31T23:30"), 45),
            Row("mentorship", volunteer, acme, oslo("2025-03-01T00:30"), 30),
        ]
    )
    figures = figures_of(
        db, company_id=acme, query=ReportQuery(Period(date(2025, 1, 1), date(2025, 12, 31), "y")), tz=OSLO
    )
    by_month = {m.start[:7]: m.total.minutes for m in figures.months}
    assert by_month["2025-01"] == 60 and by_month["2025-02"] == 0 and by_month["2025-03"] == 30
    assert by_month["2025-07"] == 45 and by_month["2025-08"] == 0
    february = figures_of(
        db, company_id=acme, query=ReportQuery(Period(date(2025, 2, 1), date(2025, 2, 28), "f")), tz=OSLO
    )
    assert february.total.minutes == 0
    january = figures_of(
        db, company_id=acme, query=ReportQuery(Period(date(2025, 1, 31), date(2025, 1, 31), "d")), tz=OSLO
    )
    assert january.total.minutes == 60


def test_participation_counts_only_colleagues_of_the_period(db, company, insert_sessions):
    import sqlalchemy as sa

    acme, _, staff = company("Acme Ltd", employees=4)
    with db.write() as conn:  # one colleague joined only in 2026: not a colleague in 2025
        conn.execute(
            sa.text("UPDATE company_memberships SET started_at = '2026-02-01T00:00:00.000000Z' WHERE user_id = :u"),
            {"u": staff[3]},
        )
    insert_sessions([Row("language", staff[0], acme, oslo("2025-05-05T18:00"), 60)])
    figures = figures_of(
        db, company_id=acme, query=ReportQuery(Period(date(2025, 1, 1), date(2025, 12, 31), "y")), tz=OSLO
    )
    assert (figures.total.volunteers, figures.employees, figures.participation) == (1, 3, 33.3)


def test_a_volunteer_whose_membership_began_later_counts_among_the_colleagues(db, company, insert_sessions):
    """A session held before a volunteer's first membership counts for the company, so the volunteer
    counts in the denominator too: participation never passes 100%."""
    import sqlalchemy as sa

    acme, _, staff = company("Acme Ltd", employees=4)
    with db.write() as conn:  # joined in 2026, yet a 2025 session is the company's
        conn.execute(
            sa.text("UPDATE company_memberships SET started_at = '2026-02-01T00:00:00.000000Z' WHERE user_id = :u"),
            {"u": staff[3]},
        )
    insert_sessions(
        [Row("language", staff[0], acme, oslo("2025-05-05T18:00"), 60)]
        + [Row("mentorship", staff[3], acme, oslo("2025-06-05T18:00"), 45)]
    )
    figures = figures_of(
        db, company_id=acme, query=ReportQuery(Period(date(2025, 1, 1), date(2025, 12, 31), "y")), tz=OSLO
    )
    assert (figures.total.volunteers, figures.employees, figures.participation) == (2, 4, 50.0)


@pytest.mark.parametrize("listed", [True, False])
def test_groups_and_quarters_match_an_independent_computation(db, two_companies, listed):
    """What a filing's mask protects: the volunteers of each month and of the year by the set of
    programmes they attended, and each whole quarter's volunteers by programme and in all; the same
    whether or not the per-volunteer list is read (a filing reads none)."""
    acme, _, _, rows = two_companies
    period = Period(date(2025, 1, 1), date(2025, 12, 31), "2025")
    figures = figures_of(db, company_id=acme, query=ReportQuery(period, "all"), tz=OSLO, listed=listed)
    kept = [r for r in rows if r.company_id == acme and r.status == "attended"]

    def local_month(r):
        return r.held_at.astimezone(OSLO).strftime("%Y-%m")

    def groups(chosen) -> dict[str, int]:
        attended = defaultdict(set)
        for r in chosen:
            attended[r.user_id].add(r.platform)
        found = defaultdict(int)
        for platforms in attended.values():
            found["+".join(sorted(platforms))] += 1
        return dict(found)

    in_year = [r for r in kept if local_month(r).startswith("2025")]
    assert figures.groups == groups(in_year)
    for month in figures.months:
        assert month.groups == groups([r for r in in_year if local_month(r) == month.start[:7]]), month.start
    quarters = {}
    for first in (1, 4, 7, 10):
        months = {f"2025-{m:02d}" for m in range(first, first + 3)}
        inside = [r for r in in_year if local_month(r) in months]
        counts = {p: len({r.user_id for r in inside if r.platform == p}) for p in ("language", "mentorship")}
        quarters[f"2025-{first:02d}..2025-{first + 2:02d}"] = {
            **{p: n for p, n in counts.items() if n},
            "all": len({r.user_id for r in inside}),
        }
    assert figures.spans == quarters
    assert all(q["all"] for q in quarters.values()), "the rows fill every quarter"
    assert len(figures.volunteers) == (len({r.user_id for r in in_year}) if listed else 0)


def test_the_page_lists_the_top_volunteers_and_all_on_request(two_companies, manager_client, monkeypatch):
    from portal.reports import routes

    acme, manager, _, rows = two_companies
    monkeypatch.setattr(routes, "PAGE_VOLUNTEERS", 3)
    client = manager_client(manager)
    page = client.get("/reports?from=2025-01-01&to=2025-12-31").get_data(as_text=True)
    listed = re.findall(r'href="/reports/volunteers/(\d+)[?"]', page)
    want = expected(rows, acme, date(2025, 1, 1), date(2025, 12, 31))["by_volunteer"]
    top = sorted(want.values(), reverse=True)[:3]
    assert sorted((want[int(u)] for u in listed), reverse=True) == top
    assert "Showing the 3 volunteers with the most hours of 8." in page
    everyone = client.get("/reports?from=2025-01-01&to=2025-12-31&volunteers=all").get_data(as_text=True)
    assert len(re.findall(r'href="/reports/volunteers/(\d+)[?"]', everyone)) == 8


def test_a_volunteers_page_from_the_report_says_its_period_and_shows_only_its_sessions(
    company, insert_sessions, manager_client
):
    acme, manager, staff = company(employees=1)
    insert_sessions(
        [
            Row("language", staff[0], acme, oslo("2026-10-31T23:30"), 30),  # the last evening of October, in Oslo
            Row("language", staff[0], acme, oslo("2026-11-02T18:00"), 60),
            Row("mentorship", staff[0], acme, oslo("2026-11-20T18:00"), 45),
            Row("language", staff[0], acme, oslo("2026-12-01T00:15"), 90),  # already December
        ]
    )
    client = manager_client(manager)
    report = client.get("/reports?from=2026-11-01&to=2026-11-30").get_data(as_text=True)
    (link,) = re.findall(r'href="(/reports/volunteers/\d+\?[^"]+)"', report)
    page = client.get(link.replace("&amp;", "&")).get_data(as_text=True)
    said = re.sub(r"<[^>]+>", "", re.search(r'<p class="period-line" id="period">(.*?)</p>', page, re.S).group(1))
    # Named as the report names it ("November 2026", or "Last month: …" while it is December), with its days.
    assert said.startswith("Period: ") and "1 Nov 2026 – 30 Nov 2026" in said and "all programmes." in said
    assert "2 attended sessions" in page and "1.75 hours" in page, "November's two sessions, 105 minutes"
    only_language = client.get(f"/reports/volunteers/{staff[0]}?from=2026-11-01&to=2026-11-30&programme=language")
    assert "1 attended session " in only_language.get_data(as_text=True)
    everything = client.get(f"/reports/volunteers/{staff[0]}").get_data(as_text=True)
    assert "Period: every session, since the first." in everything and "4 attended sessions" in everything
    assert client.get(f"/reports/volunteers/{staff[0]}?from=2026-11-31&to=2026-11-30").status_code == 400


def test_the_per_volunteer_statements_sort_nothing(db):
    """A volunteer at a time, in user_id order, from the index: a sort of a year's rows would hold
    them all in memory (libSQL keeps temporary data there), so a filing's memory would grow with its
    rows (bench/report.py measures it; this holds the plan that keeps it flat)."""
    import sqlalchemy as sa

    from portal.reports.figures import per_month_sql, per_volunteer_sql

    params = {"company_id": 1, "start": "2025-01-01", "end": "2026-01-01", "programmes": '["language"]'}
    params |= {f"b{i}": f"2025-{i + 1:02d}-01" for i in range(1, 12)}
    for statement in (per_volunteer_sql(12, members_only=True, names=True), per_month_sql(12)):
        with db.read() as conn:
            plan = [row[3] for row in conn.execute(sa.text(f"EXPLAIN QUERY PLAN {statement.text}"), params)]
        assert any("attendance_sessions_user" in step for step in plan), plan
        assert not [step for step in plan if "GROUP BY" in step or "ORDER BY" in step], plan
