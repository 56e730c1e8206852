"""Every figure on the report page opens the session records it counts (issue 50, item 2).

The test reads the page as a browser would (every figure link), opens each link's list as CSV and
sums it back itself: minutes to hours at the two decimals shown, records counted, colleagues counted
once. The year's totals are also checked against the rows inserted here, apart from the portal.
"""

from __future__ import annotations

import csv
import io
import re
from html.parser import HTMLParser

import pytest
import sqlalchemy as sa

from tests.pages import csrf_from

from .conftest import Row, oslo, shown_hours, utc

YEAR = "from=2025-01-01&to=2025-12-31"


class FigureLinks(HTMLParser):
    """Each figure link of a page: (what it counts, its text, its href). What it counts comes from the
    cell it stands in (`data-label`) or the headline's id, as a reader sees it under its heading."""

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str, str]] = []
        self._label = ""
        self._link: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "td":
            self._label = attrs.get("data-label", "")
        if tag == "a" and "figure-link" in (attrs.get("class") or ""):
            self._link = {"href": attrs["href"], "id": attrs.get("id", ""), "text": ""}

    def handle_data(self, data):
        if self._link is not None:
            self._link["text"] += data

    def handle_endtag(self, tag):
        if tag == "a" and self._link is not None:
            link, self._link = self._link, None
            label = link["id"].removeprefix("figure-") or self._label
            kind = "hours" if label in ("hours", "Hours") or label.endswith(" h") else label.lower()
            self.found.append((kind, link["text"].strip(), link["href"]))


def figure_links(page: str) -> list[tuple[str, str, str]]:
    parser = FigureLinks()
    parser.feed(page)
    return parser.found


def records(client, href: str) -> list[dict]:
    """The figure's list as CSV (every record, not only a page's)."""
    path, _, query = href.partition("?")
    assert path == "/reports/sessions", href
    response = client.get(f"/reports/sessions.csv?{query}")
    assert response.status_code == 200 and response.mimetype == "text/csv", href
    return list(csv.DictReader(io.StringIO(response.get_data(as_text=True).lstrip("\ufeff"))))


def summed(rows: list[dict], kind: str) -> str:
    if kind == "hours":
        return shown_hours(sum(int(r["minutes"]) for r in rows))
    if kind == "sessions":
        return f"{len(rows):,}"
    assert kind == "volunteers", kind
    return f"{len({r['email'] for r in rows}):,}"


@pytest.fixture
def year(company, insert_sessions, db):
    """A year of sessions: both programmes, odd lengths (rounding), departments, late evening and
    new year's edges, cancellations, and another company's sessions that no list may show."""
    acme, manager, staff = company("Acme Ltd", employees=8)
    other, _, other_staff = company("Other Co", employees=2)
    with db.write() as conn:
        for person, department in zip(  # "Sales " with a space, as a directory may send it: a list of its own
            staff, ["Finance", "Finance", "Sales", "Sales", "Sales ", "", None, "IT"], strict=True
        ):
            conn.execute(sa.text("UPDATE users SET department = :d WHERE id = :u"), {"d": department, "u": person})
    rows = []
    for month in range(1, 13):
        for n, person in enumerate(staff):
            if (month + n) % 3 == 0:
                continue
            platform = "language" if n % 3 else "mentorship"
            rows.append(Row(platform, person, acme, oslo(f"2025-{month:02d}-{3 + n:02d}T18:00"), 35 + 7 * n + month))
    rows += [
        Row("language", staff[0], acme, oslo("2025-12-31T23:30"), 50),  # the year's last evening: December
        Row("language", staff[0], acme, oslo("2026-01-01T00:30"), 50),  # the next year's
        Row("mentorship", staff[1], acme, oslo("2024-12-31T23:59"), 40),
        Row("language", staff[2], acme, oslo("2025-05-05T18:00"), 60, status="cancelled"),
        Row("mentorship", staff[3], acme, oslo("2025-06-06T18:00"), 60, status="no_show"),
        Row("language", other_staff[0], other, oslo("2025-03-04T18:00"), 600),
        Row("mentorship", other_staff[1], other, oslo("2025-03-05T18:00"), 45),
    ]
    insert_sessions(rows)
    counted = [
        r
        for r in rows
        if r.company_id == acme
        and r.status == "attended"
        and utc("2024-12-31T23:00") <= r.held_at < utc("2025-12-31T23:00")
    ]
    return manager, counted, other_staff


@pytest.mark.parametrize("programme", ["all", "language"])
def test_every_figure_on_a_years_report_sums_back_from_its_records(year, manager_client, programme):
    manager, counted, _ = year
    client = manager_client(manager)
    page = client.get(f"/reports?{YEAR}&programme={programme}").get_data(as_text=True)
    links = figure_links(page)
    chosen = [r for r in counted if programme in ("all", r.platform)]
    # Every figure is a link: the headline (3), each month's programmes, total, sessions and
    # volunteers, each programme's 3, each department's 2 and each volunteer's 2.
    programmes = 2 if programme == "all" else 1
    months, people = 12, len({r.user_id for r in chosen})
    departments = len({"Finance", "Sales", "Sales ", "IT", "none"}) if programme == "all" else 5
    per_month = (programmes if programmes > 1 else 0) + 3
    # The month table is on the page twice: beside the chart, and folded for a phone.
    assert len(links) == 3 + 2 * months * per_month + programmes * 3 + departments * 2 + people * 2, len(links)
    kinds = {kind for kind, _, _ in links}
    assert kinds == {"hours", "sessions", "volunteers"}, kinds

    headline = {kind: text for kind, text, href in links[:3]}
    assert headline == {
        "hours": shown_hours(sum(r.minutes for r in chosen)),
        "sessions": str(len(chosen)),
        "volunteers": str(len({r.user_id for r in chosen})),
    }
    for kind, text, href in links:
        rows = records(client, href)
        assert summed(rows, kind) == text, (kind, text, href)
        assert all(r["programme"] in (["language", "mentorship"] if programme == "all" else [programme]) for r in rows)
        assert not any("other.example" in r["email"] for r in rows)

    # The list page states what its records add up to: the figure it was opened from.
    kind, text, href = links[0]
    listed = client.get(href).get_data(as_text=True)
    assert re.search(r'id="drill-hours">([^<]+)<', listed).group(1) == text
    assert re.search(r'id="drill-sessions">([^<]+)<', listed).group(1) == headline["sessions"]


def test_a_list_pages_through_its_records_oldest_first(year, manager_client, insert_sessions):
    manager, counted, _ = year
    acme, person = counted[0].company_id, counted[0].user_id
    more = [
        Row("language", person, acme, oslo(f"2025-11-{1 + n % 28:02d}T{8 + n // 28:02d}:15"), 30) for n in range(60)
    ]
    counted = counted + insert_sessions(more)
    client = manager_client(manager)
    total = figure_links(client.get(f"/reports?{YEAR}&programme=all").get_data(as_text=True))[0][2]
    first = client.get(total).get_data(as_text=True)
    assert f"Showing 1–100 of {len(counted)}" in first
    second = client.get(total + "&page=2").get_data(as_text=True)
    assert f"Showing 101–{len(counted)} of {len(counted)}" in second
    held = [re.findall(r'<td class="nowrap colleague"><strong>([^<]+)</strong>', p) for p in (first, second)]
    assert len(held[0]) == 100 and len(held[0]) + len(held[1]) == len(counted)
    oldest = min(counted, key=lambda r: r.held_at)
    assert held[0][0].endswith(oldest.held_at.astimezone(oslo("2025-01-01T00:00").tzinfo).strftime("%H:%M"))


def test_the_list_csv_is_one_machine_format_in_every_language(year, manager_client, client):
    manager, counted, _ = year
    client = manager_client(manager)
    page = client.get("/reports").get_data(as_text=True)
    client.post("/language", data={"language": "nb", "next": "/reports", "csrf_token": csrf_from(page)})
    norwegian = client.get(f"/reports?{YEAR}&programme=all").get_data(as_text=True)
    assert "Frivillighetsrapport" in norwegian or 'lang="nb"' in norwegian
    kind, text, href = figure_links(norwegian)[0]
    assert kind == "hours" and "," in text  # the page writes hours as Norwegian does
    body = client.get(href.replace("/reports/sessions?", "/reports/sessions.csv?")).get_data(as_text=True)
    rows = list(csv.reader(io.StringIO(body.lstrip("\ufeff"))))
    assert rows[0][:7] == ["held_at_utc", "held_at_local", "programme", "name", "email", "minutes", "hours"]
    assert len(rows) - 1 == len(counted)
    for row in rows[1:]:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", row[0])
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d\+0[12]:00", row[1])
        assert re.fullmatch(r"\d+\.\d\d", row[6])
    as_english = re.sub(r"\s", "", text).replace(",", ".")  # "1 234,56" -> "1234.56"
    assert shown_hours(sum(int(r[5]) for r in rows[1:])).replace(",", "") == as_english


def test_a_list_shows_only_the_managers_company(year, manager_client, client, auth, db):
    manager, counted, other_staff = year
    client = manager_client(manager)
    stranger = client.get(f"/reports/sessions?{YEAR}&programme=all&volunteer={other_staff[0]}")
    assert stranger.status_code == 200
    text = stranger.get_data(as_text=True)
    assert 'id="drill-empty"' in text and "other.example" not in text and "Other Volunteer" not in text
    assert records(client, f"/reports/sessions?{YEAR}&programme=all&volunteer={other_staff[0]}") == []
    for bad in (
        f"{YEAR}&volunteer=abc",
        f"{YEAR}&programme=sales",
        "from=2025-13-01&to=2025-12-31",
        f"{YEAR}&volunteer=1&department=IT",
    ):
        assert client.get(f"/reports/sessions?{bad}").status_code == 400, bad
    auth.logout()
    with db.read() as conn:
        employee = conn.execute(sa.text("SELECT email FROM users WHERE role = 'employee' LIMIT 1")).scalar_one()
    auth.login(employee)
    assert client.get(f"/reports/sessions?{YEAR}&programme=all").status_code in (302, 403)
    assert client.get(f"/reports/sessions.csv?{YEAR}&programme=all").status_code in (302, 403)


def test_a_closed_years_list_marks_what_arrived_after_the_close(company, insert_sessions, manager_client, db):
    acme, manager, staff = company("Acme Ltd", employees=2)
    insert_sessions([Row("language", person, acme, oslo("2025-03-04T18:00"), 60) for person in staff])
    client = manager_client(manager)
    page = client.get("/reports/settings").get_data(as_text=True)
    client.post(
        "/reports/close", data={"period_start": "2025-01-01", "confirmed": "yes", "csrf_token": csrf_from(page)}
    )
    insert_sessions(
        [Row("mentorship", staff[0], acme, oslo("2025-06-01T10:00"), 120)], received_at="2099-01-01T00:00:00.000000Z"
    )
    report = client.get(f"/reports?{YEAR}&programme=all").get_data(as_text=True)
    kind, text, href = figure_links(report)[0]
    assert (kind, text) == ("hours", "2.00")  # the filed figure
    listed = client.get(href).get_data(as_text=True)
    assert 'id="drill-closed"' in listed and "1 of them arrived after the close" in listed
    assert listed.count("after the close</span>") == 1
    assert re.search(r'id="drill-hours">([^<]+)<', listed).group(1) == "4.00"  # the records as they are now
